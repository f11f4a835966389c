import {html, num, type Html} from './html.js'

export interface Column {
  title: string
  /** Right-aligned, sorted by value. */
  numeric?: boolean
}

/** A cell: text, markup, a number (shown with separators), or a number shown another way but sorted by its value. */
export type Cell = string | number | Html | {value: number; text: string | Html}

export interface TableSpec {
  /** The element id: the page's script finds a table's filter box and sort state by it. */
  id: string
  columns: Column[]
  rows: Cell[][]
  /** How many rows there are in all (more than rows.length when the analysis already cut the list). */
  total?: number
  /** Rows emitted at most: a big core's report stays small; the rest is counted in one line. */
  max?: number
  /** Where the whole list is (a command), said in the "N more" line. */
  whole?: string
  /** A text box above the table that hides the rows not containing its text. */
  filter?: boolean
}

/** Rows a table shows unless told otherwise. */
export const TABLE_ROWS = 200

function cell(c: Cell, column: Column): Html {
  const n = column.numeric ? html` class="n"` : ''
  if (typeof c === 'number') return html`<td${n} data-v="${c}">${num(c)}</td>`
  if (typeof c === 'object' && 'value' in c) return html`<td${n} data-v="${c.value}">${c.text}</td>`
  return html`<td${n}>${c}</td>`
}

/**
 * A table the page's script can sort (click a header) and, with `filter`, filter by text. Cut at
 * `max` rows; the line under it says how many more there are and where they all are.
 */
export function dataTable(t: TableSpec): Html {
  const max = t.max ?? TABLE_ROWS
  const shown = t.rows.slice(0, max)
  const total = Math.max(t.total ?? t.rows.length, t.rows.length)
  const more = total - shown.length
  return html`<div class="table-block">
${t.filter ? html`<div class="filter-line"><input type="search" class="filter" data-table="${t.id}" placeholder="filter by text…" aria-label="filter ${t.id}"> <span class="shown" data-table="${t.id}">${num(shown.length)} ${shown.length === 1 ? 'row' : 'rows'}</span></div>` : ''}
<table id="${t.id}" class="sortable">
<thead><tr>${t.columns.map((c, i) => html`<th data-col="${i}"${c.numeric ? html` class="n" data-numeric="1"` : ''}>${c.title}</th>`)}</tr></thead>
<tbody>
${shown.map(r => html`<tr>${r.map((c, i) => cell(c, t.columns[i]!))}</tr>\n`)}</tbody>
</table>
${more > 0 ? html`<p class="more">… ${num(more)} more not shown${t.whole ? html` (the whole list: <code>${t.whole}</code>)` : ''}</p>` : ''}
</div>`
}
