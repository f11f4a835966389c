import type {HeapSummary} from '../../queries/heap-summary.js'
import {leakStartsPage} from '../../queries/leak-starts.js'
import {bytes} from '../../report/table.js'
import {objectKind} from '../../report/wording.js'
import {dataTable} from '../../report/html/data-table.js'
import {html, num} from '../../report/html/html.js'
import {leaksHref, objectHref} from '../links.js'
import {pagerLine} from '../pager.js'
import {intParam} from '../params.js'
import {PAGE_ROWS, type ServePage} from '../serve-page.js'

/**
 * Live objects no root reaches: the totals analyze counted, and where each leaked structure starts,
 * largest retained first, paged, each a link to its object. Per type: `toma leaks` (a pass over
 * every object, more than a page's time on a big core).
 */
export const leaksPage: ServePage = {
  path: '/leaks',
  nav: 'Leaks',
  answer(ctx, url) {
    const index = ctx.core.index
    const g = (index.meta.summary as unknown as HeapSummary).graph
    if (!g || !index.holds('graph')) return {kind: 'page', title: 'Leaks', body: html`<p>No object graph: the index holds the heap model only (run toma analyze on the core).</p>`}
    const page = intParam(url, 'page', 1, 1e9) ?? 1
    const found = leakStartsPage(index, (page - 1) * PAGE_ROWS, PAGE_ROWS)
    const body = html`<p>${num(g.unreachable.objects)} live objects (${bytes(g.unreachable.bytes)}) are reachable from no root${g.unreachable.objects ? html`, in structures starting at ${num(found.total)} objects` : ''}.${g.allocatorInternal.objects ? html` <span class="dim">Not counted: ${num(g.allocatorInternal.objects)} unreferenced allocations of TCMalloc itself (${bytes(g.allocatorInternal.bytes)}).</span>` : ''}</p>
${found.total === 0
  ? ''
  : html`<h2>Where leaked structures start</h2>
${dataTable({
  id: 'leak-starts',
  max: PAGE_ROWS,
  columns: [{title: 'address'}, {title: 'type'}, {title: 'size', numeric: true}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'pointed to by', numeric: true}],
  rows: found.starts.map(o => [html`<a href="${objectHref(Number(o.address))}"><code>${o.address}</code></a>`, objectKind(o), o.size, {value: o.retainedBytes, text: bytes(o.retainedBytes)}, o.retainedObjects, o.pointedToBy]),
})}
${pagerLine({first: (page - 1) * PAGE_ROWS, shown: found.starts.length, total: found.total, prevHref: page > 1 ? leaksHref(page - 1) : undefined, nextHref: page * PAGE_ROWS < found.total ? leaksHref(page + 1) : undefined})}
<p class="dim">Per type, with the last frames that saw each object: <code>toma leaks</code>.</p>`}`
    return {kind: 'page', title: 'Leaks', body}
  },
}
