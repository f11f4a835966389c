import type {HeapIndex} from '../index/heap-index.js'
import {html, num, type Html} from '../report/html/html.js'
import {objectKind} from '../report/wording.js'
import {storedHolderName} from '../queries/holder-groups.js'
import {objectHref} from './links.js'

/**
 * What a live object is called in a list: its name by any tier, else which kind of untyped block
 * and what holds it (the holder walk's name, as `find-object` and the export give it), so that a
 * list of 2 KiB buffers says whose they are.
 */
export function objectName(index: HeapIndex, slot: number): string {
  const o = index.object(slot)
  const type = index.type(slot)
  const kind = objectKind({type, sizeClass: index.sizeClass(o)})
  const holder = type === null && index.holds('graph') ? storedHolderName(index, slot) : null
  return holder === null ? kind : `${kind} held by ${holder}`
}

/** An object in one line, its address a link to its page: `0x… app::Order 48 B`. */
export function objectLink(index: HeapIndex, slot: number, withSize = true): Html {
  const o = index.object(slot)
  return html`<a href="${objectHref(o.start)}"><code>0x${o.start.toString(16)}</code></a> ${objectName(index, slot)}${withSize ? html` <span class="dim">${num(o.size)} B</span>` : ''}`
}
