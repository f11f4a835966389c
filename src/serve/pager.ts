import {html, num, type Html} from '../report/html/html.js'

/** The line under a paged list: which rows these are, and links to the first, previous and next pages where there are some. */
export function pagerLine(p: {first?: number; shown: number; total?: number; firstHref?: string; prevHref?: string; nextHref?: string}): Html {
  // A list paged by a cursor knows no row numbers: it says how many rows it shows.
  const range = p.shown === 0 ? 'no rows' : p.first === undefined ? `${num(p.shown)} ${p.shown === 1 ? 'row' : 'rows'}` : `rows ${num(p.first + 1)}–${num(p.first + p.shown)}${p.total === undefined ? '' : ` of ${num(p.total)}`}`
  return html`<div class="pager"><span class="dim">${range}</span>${p.firstHref ? html`<a href="${p.firstHref}" rel="first">first page</a>` : ''}${p.prevHref ? html`<a href="${p.prevHref}" rel="prev">← previous</a>` : ''}${p.nextHref ? html`<a href="${p.nextHref}" rel="next">next →</a>` : ''}</div>`
}
