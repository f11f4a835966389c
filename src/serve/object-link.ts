import type {HeapIndex} from '../index/heap-index.js'
import {html, num, type Html} from '../report/html/html.js'
import {objectKind} from '../report/wording.js'
import {storedHolderName} from '../queries/holder-groups.js'
import {objectHref} from './links.js'
import type {ViaLabel} from '../naming/via.js'

/**
 * What a live object is called in a list: its name by any tier, else which kind of untyped block
 * and what holds it (the holder walk's name, as `find-object` and the export give it), so that a
 * list of 2 KiB buffers says whose they are.
 */
export function objectName(index: HeapIndex, slot: number): string {
  return namedObject(index, slot).name
}

/** The object's name as objectName gives it, and the tier that gave the name ('' for none: an untyped block no holder names). */
function namedObject(index: HeapIndex, slot: number): {name: string; tier: ViaLabel} {
  const o = index.object(slot)
  const type = index.type(slot)
  const kind = objectKind({type, sizeClass: index.sizeClass(o)})
  if (type !== null) return {name: kind, tier: index.via(slot)}
  const holder = index.holds('graph') ? storedHolderName(index, slot) : null
  return holder === null ? {name: kind, tier: ''} : {name: `${kind} held by ${holder}`, tier: 'holder'}
}

/** A name with the tier that gave it, as the object page shows every name: `app::Order (vtable)`. */
export function objectNameWithTier(index: HeapIndex, slot: number): Html {
  const {name, tier} = namedObject(index, slot)
  return html`${name}${tier ? html` <span class="dim tier">(${tier})</span>` : ''}`
}

/** An object in one line, its address a link to its page and its name with its tier: `0x… app::Order (vtable) 48 B`. */
export function objectLink(index: HeapIndex, slot: number, withSize = true): Html {
  const o = index.object(slot)
  return html`<a href="${objectHref(o.start)}"><code>0x${o.start.toString(16)}</code></a> ${objectNameWithTier(index, slot)}${withSize ? html` <span class="dim">${num(o.size)} B</span>` : ''}`
}
