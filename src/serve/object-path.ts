import type {Paths} from '../queries/paths.js'
import {pathHtml as reportPathHtml} from '../report/html/held-memory.js'
import {html, num, type Html} from '../report/html/html.js'
import {ALLOCATOR_OWN, count, objectKind} from '../report/wording.js'
import {objectHref} from './links.js'

/** An object's shortest path from a root, root first, each step a link to its page; for a leaked object, the leaked objects nothing else points to that reach it. */
export function pathHtml(p: Paths): Html {
  if (p.object.state !== 'live') return html`<p class="dim">not live: no path (only live objects are in the object graph)</p>`
  if (p.paths.length) return html`${p.paths.map(r => reportPathHtml(r, stepLink))}`
  if (p.allocatorOwn) return html`<p>${ALLOCATOR_OWN}</p>`
  return html`<p class="warn">leaked: no root reaches it.</p>${p.leakStarts.length ? html`<p>It is reached from ${p.leakStarts.length === 1 ? 'the leaked object' : 'the leaked objects'} nothing else points to:</p><ul>${p.leakStarts.map(s => html`<li>${stepLink(s)} retains ${num(s.retainedBytes)} B in ${count(s.retainedObjects, 'object')}</li>`)}</ul>` : ''}${p.searchCut ? html`<p class="dim">(the search back through referrers stopped at its limit${p.leakStarts.length ? '' : ' before it found one'}: toma path ${p.object.address} searches further)</p>` : ''}`
}

function stepLink(o: {address: string; type: string | null; sizeClass: number; size: number}): Html {
  return html`<a href="${objectHref(Number(o.address))}"><code>${o.address}</code></a> ${objectKind(o)} <span class="dim">${num(o.size)} B</span>`
}
