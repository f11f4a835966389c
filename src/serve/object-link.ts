import type {HeapIndex} from '../index/heap-index.js'
import {html, num, type Html} from '../report/html/html.js'
import {objectKind} from '../report/wording.js'
import {objectHref} from './links.js'

/** What a live object is called in a list: its name by any tier, else which kind of untyped block. */
export function objectName(index: HeapIndex, slot: number): string {
  const o = index.object(slot)
  return objectKind({type: index.type(slot), sizeClass: index.sizeClass(o)})
}

/** An object in one line, its address a link to its page: `0x… app::Order 48 B`. */
export function objectLink(index: HeapIndex, slot: number, withSize = true): Html {
  const o = index.object(slot)
  return html`<a href="${objectHref(o.start)}"><code>0x${o.start.toString(16)}</code></a> ${objectName(index, slot)}${withSize ? html` <span class="dim">${num(o.size)} B</span>` : ''}`
}
