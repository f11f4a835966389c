import {percent} from '../wording.js'
import type {HeapSummary} from '../../queries/heap-summary.js'
import {bytes} from '../table.js'
import {dataTable} from './data-table.js'
import {html, num, type Html} from './html.js'
import {facts, type ReportSection} from './section.js'
import {statesBarSvg} from './states-bar.js'

/** The core, the allocator and how it was found, spans and thread caches, the object graph. */
export function overviewSection(s: HeapSummary): ReportSection {
  const a = s.allocator
  const body = html`${facts([
    ['core', html`<code>${s.core.path}</code> (${bytes(s.core.size)})`],
    ['process', `${s.core.command ?? '?'}, pid ${s.core.pid ?? '?'}, ${num(s.threads.length)} threads`],
    ['allocator', `${a.kind} ${a.version}, layout ${a.kind === 'gperftools' ? 'group' : 'family'} ${a.layoutGroup}, ${a.pageSize / 1024} KiB pages, ${num(a.sizeClasses)} size classes`],
    ['version from', a.versionHow],
    ['module', a.moduleFile && a.moduleFile !== a.module ? `${a.module} (file ${a.moduleFile})` : a.module],
    ['verdict', s.warnings.consistent ? html`<span class="ok">consistent: no warning, every cross-check figure equal</span>` : html`<span class="bad">not consistent: ${num(s.warnings.total)} warnings (see Warnings)</span>`],
  ])}
<h3>TCMalloc's globals</h3>
${dataTable({id: 'globals', columns: [{title: 'global'}, {title: 'address'}, {title: 'found by'}], rows: Object.entries(a.globals).map(([name, x]) => [name, html`<code>${x.address ?? '-'}</code>`, x.how])})}
<h3>Spans (${num(s.spans.total)})</h3>
${dataTable({id: 'spans', columns: [{title: 'kind'}, {title: 'spans', numeric: true}, {title: 'bytes', numeric: true}, {title: 'size', numeric: true}], rows: Object.entries(s.spans.byKind).map(([k, v]) => [k, v.spans, v.bytes, {value: v.bytes, text: bytes(v.bytes)}])})}
<h3>Thread caches (${num(s.threadCaches.length)})</h3>
${dataTable({id: 'thread-caches', columns: [{title: 'thread cache'}, {title: 'tid', numeric: true}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}, {title: 'in the thread\'s TLS'}], rows: s.threadCaches.map(c => [html`<code>${c.address}</code>`, c.tid === null ? '?' : String(c.tid), c.objects, c.bytes, c.inTls === null ? '?' : c.inTls ? 'yes' : 'no (an older, unused cache)'])})}
<h3>Object graph</h3>
${graphFacts(s)}`
  return {id: 'overview', title: 'Core and allocator', body}
}

function graphFacts(s: HeapSummary): Html {
  const g = s.graph
  // A report is made from an index with the graph; a model-stage summary has none.
  if (!g) return facts([['graph', 'not built (the index holds the heap model only)']])
  const used = g.roots.filter(r => r.used)
  return facts([
    ['scanned', `${num(g.scannedObjects)} live objects (${bytes(g.scannedBytes)}), ${num(g.edges)} pointers between them`],
    ['roots', `${used.map(r => `${num(r.count)} ${r.kind} (${bytes(r.scannedBytes)} scanned)`).join(', ')}`],
    ['names', `${percent(s.names.namedShare)} of live bytes named (${bytes(s.names.namedBytes)} of ${bytes(s.names.liveBytes)}), ${num(s.names.namedObjects)} objects${s.names.byVia.length ? `: ${s.names.byVia.map(v => `${num(v.objects)} by ${v.via} (${bytes(v.bytes)})`).join(', ')}` : ''}; ${num(s.names.distinctNames)} distinct names${s.names.conflicts ? `; ${num(s.names.conflicts)} objects given two names (the first kept; see the warnings)` : ''}`],
    ['leaked', `${num(g.unreachable.objects)} live objects (${bytes(g.unreachable.bytes)}) reachable from no root`],
    ...(g.allocatorInternal.objects ? [['not counted', `${num(g.allocatorInternal.objects)} unreferenced allocations of TCMalloc itself (${bytes(g.allocatorInternal.bytes)})`] as [string, string]] : []),
    ...(g.unreadableObjects ? [['unreadable', html`<span class="warn">${num(g.unreadableObjects)} live objects could not be read from the core</span>`] as [string, Html]] : []),
  ])
}

/** Bytes per object state as a bar, the same as a table, and the top size classes. */
export function statesSection(s: HeapSummary): ReportSection {
  const body = html`${statesBarSvg(s.states)}
${dataTable({id: 'states', columns: [{title: 'state'}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}, {title: 'size', numeric: true}], rows: s.states.map(r => [r.state, r.objects, r.bytes, {value: r.bytes, text: bytes(r.bytes)}])})}
<p class="dim">span tail waste (counted by TCMalloc as central-cache free): ${num(s.spanWasteBytes)} bytes</p>
<h3>Top size classes by live bytes</h3>
${dataTable({id: 'size-classes', columns: [{title: 'class', numeric: true}, {title: 'size', numeric: true}, {title: 'live objects', numeric: true}, {title: 'live bytes', numeric: true}, {title: 'free objects', numeric: true}], rows: s.topSizeClasses.map(c => [c.sizeClass, c.size, c.liveObjects, c.liveBytes, c.freeObjects])})}`
  return {id: 'states', title: 'Bytes per state', body}
}

/** toma's figures against the counters TCMalloc keeps in the core. */
export function crossCheckSection(s: HeapSummary): ReportSection {
  const body = dataTable({
    id: 'cross-check',
    columns: [{title: 'figure'}, {title: 'property'}, {title: 'toma', numeric: true}, {title: 'TCMalloc', numeric: true}, {title: 'check'}],
    rows: s.crossCheck.map(c => [c.name, html`<code>${c.property}</code>`, c.toma, c.tcmalloc, c.equal ? html`<span class="ok">equal</span>` : html`<span class="bad">differs by ${num(c.toma - c.tcmalloc)}</span>`]),
  })
  return {id: 'cross-check', title: 'Cross-check against TCMalloc\'s counters', body}
}
