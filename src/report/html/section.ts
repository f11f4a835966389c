import type {ObjectBrief} from '../../queries/object-brief.js'
import {objectKind} from '../wording.js'
import {html, num, type Html} from './html.js'

/**
 * One part of the report: an entry in the page's navigation and a <section>. A formatter that
 * adds a part (the comparison with a baseline core) makes one of these and hands it to htmlReport.
 */
export interface ReportSection {
  /** Names the section: its element is `section-<id>` (the navigation links to it; table ids stay free). */
  id: string
  title: string
  body: Html
}


/** An object in one line: address, what it is, its size. */
export function objectLine(o: Pick<ObjectBrief, 'address' | 'type' | 'sizeClass' | 'size'>): Html {
  return html`<code>${o.address}</code> ${objectKind(o)} <span class="dim">${num(o.size)} B</span>`
}

/** Label / value pairs. */
export function facts(rows: Array<[string, string | Html]>): Html {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
}
