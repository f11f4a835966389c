import type {EdgeRef, HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {rootFrame, rootRefLabel} from '../queries/root-label.js'
import {html, num, type Html} from '../report/html/html.js'
import {offset, withCut} from '../report/wording.js'
import type {ObjectView} from './links.js'
import {objectLink} from './object-link.js'
import {BadParameter, urlPage} from './params.js'
import {PAGE_ROWS} from './serve-page.js'

/** One page of edges of an object, and how many there are in all. */
export interface EdgePage {
  count: number
  page: number
  edges: EdgeRef[]
}

/** Referrers: the edges into `slot`, by source address (its own words into itself among them), page `page`. */
export function referrersPage(index: HeapIndex, slot: number, page: number): EdgePage {
  const count = index.inDegree(slot)
  checkPage(page, count, 'in')
  return {count, page, edges: index.inEdges(slot, PAGE_ROWS, -1, page * PAGE_ROWS)}
}

/** Referents: the edges out of `slot`, in word order, page `page`. */
export function referentsPage(index: HeapIndex, slot: number, page: number): EdgePage {
  const count = index.outDegree(slot)
  checkPage(page, count, 'out')
  const e = index.objectEdges(slot, page * PAGE_ROWS, PAGE_ROWS)
  return {count, page, edges: Array.from(e.to, (to, i) => ({from: slot, to, offset: e.offset[i]!, toOffset: e.toOffset[i]!}))}
}

function checkPage(page: number, count: number, name: string): void {
  if (page > 0 && page * PAGE_ROWS >= count) throw new BadParameter(`${name}=${page + 1}: past the last page (${num(count)} in all, ${PAGE_ROWS} a page)`)
}

/** Referrers or referents as a table: the other object (a link, with its name), where the pointer lies in the source, where it points in the target. */
export function edgeTableHtml(index: HeapIndex, slot: number, p: EdgePage, direction: 'in' | 'out', link: (view: ObjectView) => string): Html {
  if (p.count === 0) return html`<p class="dim">${direction === 'in' ? 'no object points to it' : 'it points to no live object'}</p>`
  const rows = p.edges.map(e => {
    const other = direction === 'in' ? e.from : e.to
    return html`<tr><td>${other === slot ? html`<span class="dim">itself</span>` : objectLink(index, other)}</td><td class="n">${offset(e.offset)}</td><td class="n">${offset(e.toOffset)}</td></tr>`
  })
  return html`<table id="${direction === 'in' ? 'referrers' : 'referents'}"><thead><tr><th>${direction === 'in' ? 'referrer' : 'points to'}</th><th>pointer at</th><th>into the target at</th></tr></thead><tbody>${rows}</tbody></table>
${pager(p, direction, link)}`
}

/** Previous / next page links of a paged list (the rest of the page's view kept). */
function pager(p: EdgePage, name: 'in' | 'out', link: (view: ObjectView) => string): Html {
  const last = Math.max(0, Math.ceil(p.count / PAGE_ROWS) - 1)
  if (last === 0) return html``
  return html`<p class="pager">${p.page > 0 ? html`<a href="${link({[name]: urlPage(p.page - 1)})}">← previous ${PAGE_ROWS}</a> ` : ''}page ${p.page + 1} of ${num(last + 1)}${p.page < last ? html` <a href="${link({[name]: urlPage(p.page + 1)})}" rel="next">next ${num(Math.min(PAGE_ROWS, p.count - (p.page + 1) * PAGE_ROWS))} →</a>` : ''}</p>`
}

/** The roots that point into the object (registers, stack slots with their frame, globals, TLS, mappings), the first PAGE_ROWS. */
export function rootsHtml(program: Program, index: HeapIndex, slot: number): Html {
  const roots = index.rootsOf(slot)
  if (roots.length === 0) return html`<p class="dim">no root points to it directly</p>`
  const shown = roots.slice(0, PAGE_ROWS)
  return html`<h3>${withCut(`Roots pointing to it (${num(roots.length)})`, shown.length, roots.length)}</h3>
<table id="roots"><thead><tr><th>root</th><th>thread</th><th>frame</th><th>where</th><th>into it at</th></tr></thead><tbody>${shown.map(r => {
    const frame = rootFrame(program, r)
    return html`<tr><td>${r.kind}</td><td>${r.thread ?? ''}</td><td>${frame === null ? '' : `#${frame}`}</td><td>${rootRefLabel(program, index, r)}</td><td class="n">${offset(r.toOffset)}</td></tr>`
  })}</tbody></table>`
}

