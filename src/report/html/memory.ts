import type {AccountLine} from '../../queries/memory-heap-parts.js'
import {anchorText} from '../../queries/mapping-anchors.js'
import type {MemoryReport} from '../../queries/memory.js'
import {bytes} from '../table.js'
import {percent} from '../wording.js'
import {dataTable} from './data-table.js'
import {html, num, type Html} from './html.js'
import {facts, type ReportSection} from './section.js'
import {treemapSvg, type TreemapBox} from './treemap.js'

const HEAP_GROUP = "heap (the allocator's spans)"
const BAR_WIDTH = 12
const BAR_GAP = 2
const CHART_HEIGHT = 28

/** A line's places (google/tcmalloc's page heap) in its stead: they add up to it. */
const flattened = (lines: AccountLine[]) => lines.flatMap(l => (l.parts && l.parts.length > 0 ? l.parts.map(x => ({...x, part: `${l.part.replace(/ \(.*$/, '')}: ${x.part}`})) : [l]))

/**
 * The mapped memory by kind as a treemap: one box per line of the accounting, the heap's box cut
 * into its parts (live, free by place, returned) and so another allocator's, the remainder a box
 * of its own when there is one.
 */
function accountingTreemap(m: MemoryReport): Html {
  const a = m.accounting
  const boxes: TreemapBox[] = []
  const box = (group: string, label: string, n: number) => boxes.push({group, label, bytes: n, detail: `${percent(n / a.mapped.bytes)} of the mapped bytes`, leaked: false})
  for (const l of a.lines) {
    if (l.part === a.lines[0]!.part) for (const p of flattened(a.heap.parts)) box(HEAP_GROUP, p.part, p.bytes)
    // Another allocator's line (glibc's heap) cut into its parts as the heap's is.
    else for (const p of flattened([l])) box(l.part, p.part, p.bytes)
  }
  if (a.remainder > 0) box('remainder', 'remainder (no line explains it)', a.remainder)
  return treemapSvg(boxes, 'mapped bytes by kind', 'memory-treemap', 'maps')
}

/**
 * A class's spans by share of slots live (0–10 %, …, 90–100 %) as ten bars, each bar's height its
 * spans against the class's fullest bucket, the first (nearly empty) red; each bar's count is in
 * its data-spans, all ten in the picture's tooltip. Kept small: one a row of the classes table.
 */
function occupancySvg(sizeClass: number, occupancy: number[]): Html {
  const most = Math.max(1, ...occupancy)
  const bars = occupancy.map((n, i) => {
    const h = n === 0 ? 0 : Math.max(1, Math.round((n / most) * CHART_HEIGHT))
    return html`<rect data-bucket="${i}" data-spans="${n}" x="${i * (BAR_WIDTH + BAR_GAP)}" y="${CHART_HEIGHT - h}" width="${BAR_WIDTH}" height="${h}"${i === 0 ? html` fill="#e15759"` : ''}/>`
  })
  const width = occupancy.length * (BAR_WIDTH + BAR_GAP)
  const tip = `spans by % live (0-10 … 90-100): ${occupancy.map(n => num(n)).join(' ')}`
  return html`<svg class="occupancy" data-class="${sizeClass}" viewBox="0 0 ${width} ${CHART_HEIGHT}" width="${width}" height="${CHART_HEIGHT}" role="img" aria-label="${tip}" xmlns="http://www.w3.org/2000/svg"><title>${tip}</title><g fill="#4e79a7">${bars}</g></svg>`
}

function accountingTables(m: MemoryReport): Html {
  const a = m.accounting
  const share = (n: number, of: number) => ({value: n, text: of > 0 ? percent(n / of) : '-'})
  const says = (l: AccountLine): [number | string, Html | string] => [l.allocator ? l.allocator.bytes : '', l.allocator ? html`<code>${l.allocator.property}</code>` : l.property ? html`<code>${l.property}</code>` : '']
  const heapRows = a.heap.parts.flatMap(l => [l, ...(l.parts ?? []).map(x => ({...x, part: `  of which ${x.part}`}))])
  return html`${dataTable({
    id: 'memory-lines',
    columns: [{title: 'part'}, {title: 'bytes', numeric: true}, {title: 'share', numeric: true}, {title: 'in the core file', numeric: true}, {title: 'allocator says', numeric: true}, {title: 'property'}],
    rows: [...a.lines.map(l => [l.part, l.bytes, share(l.bytes, a.mapped.bytes), l.inCore ?? '', ...says(l)]), ['remainder (no line explains it)', a.remainder, share(a.remainder, a.mapped.bytes), '', '', '']],
  })}
<h3>The heap's spans: ${bytes(a.heap.bytes)}</h3>
${dataTable({
  id: 'memory-heap',
  columns: [{title: 'part'}, {title: 'bytes', numeric: true}, {title: 'share', numeric: true}, {title: 'allocator says', numeric: true}, {title: 'property'}],
  rows: heapRows.map(l => [l.part, l.bytes, share(l.bytes, a.heap.bytes), ...says(l)]),
})}
${[...a.lines, ...a.heap.parts].filter(l => l.note).map(l => html`<p class="dim">${l.part}: ${l.note}</p>`)}
${a.heap.outsideSegments > 0 ? html`<p class="warn">${num(a.heap.outsideSegments)} bytes of spans lie in no writable segment of the core: in no line above</p>` : ''}
${a.otherAllocators.map((o, i) => {
  const total = o.parts.reduce((n, p) => n + p.bytes, 0)
  return html`<h3>${o.allocator}: ${bytes(total)}</h3>
<p class="dim">${o.foundAt}</p>
${o.parts.length ? dataTable({
  id: `memory-other-${i}`,
  columns: [{title: 'part'}, {title: 'bytes', numeric: true}, {title: 'share', numeric: true}, {title: 'chunks', numeric: true}, {title: 'note'}],
  rows: o.parts.map(p => [p.part, p.bytes, share(p.bytes, total), p.blocks, p.note ?? '']),
}) : ''}
${o.notes.map(n => html`<p class="warn">note: ${n}</p>`)}`
})}
${a.anonymousMappings.length ? html`<h3>Other anonymous mappings, with what points into them</h3>
${dataTable({
  id: 'memory-anonymous',
  columns: [{title: 'mapping'}, {title: 'bytes', numeric: true}, {title: 'in the core file', numeric: true}, {title: 'anchored by (a word of a global, a stack, a TLS block or a live heap block pointing into it)'}],
  rows: a.anonymousMappings.map(x => [html`<code>${x.mapping}</code>`, x.bytes, x.inCore, x.anchors.length ? x.anchors.map(anchorText).join('; ') : 'no anchor found']),
})}` : ''}`
}

function fragmentationTables(m: MemoryReport): Html {
  const f = m.fragmentation
  const share = `${Math.round(f.pinnedShare * 100)} %`
  return html`<h3>Size classes: how full their spans are</h3>
<p class="dim">Each class's spans by share of slots live, 0–10 % (red) to 90–100 %. Pinned: some live, at most ${share} of the slots; freeing those few objects would return the span.</p>
${dataTable({
  id: 'memory-classes',
  whole: 'toma memory --json',
  columns: [{title: 'class', numeric: true}, {title: 'size', numeric: true}, {title: 'spans', numeric: true}, {title: 'slots/span', numeric: true}, {title: 'live', numeric: true}, {title: 'spans by % live'}, {title: 'empty', numeric: true}, {title: 'free in partial spans: central', numeric: true}, {title: 'transfer', numeric: true}, {title: 'thread', numeric: true}, {title: 'pinned', numeric: true}, {title: 'pinned bytes', numeric: true}],
  rows: f.classes.map(c => [c.sizeClass, c.size, c.spans, c.objectsPerSpan, c.liveObjects, occupancySvg(c.sizeClass, c.occupancy), c.emptySpans, c.partial.freeBytes.central, c.partial.freeBytes.transfer, c.partial.freeBytes.threadCaches, c.pinned.spans, c.pinned.bytes]),
})}
<h3>What pins them: live objects in pinned spans</h3>
${dataTable({
  id: 'memory-pinners',
  filter: true,
  whole: 'toma memory --json',
  columns: [{title: 'objects', numeric: true}, {title: 'bytes', numeric: true}, {title: 'spans', numeric: true}, {title: 'pinned alone', numeric: true}, {title: 'freeing returns', numeric: true}, {title: 'name'}, {title: 'holder'}],
  rows: f.pinners.map(g => [g.objects, g.bytes, g.spans, g.spansAlone, g.bytesReturned, g.name, g.holder ?? '']),
})}
${f.cachePins.length > 0 ? html`<h3>Free objects cached by threads in pinned or empty spans</h3>
${dataTable({
  id: 'memory-cache-pins',
  columns: [{title: 'thread or CPU'}, {title: 'cache'}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}, {title: 'empty spans it alone keeps', numeric: true}, {title: 'their bytes', numeric: true}],
  rows: f.cachePins.map(c => [c.cpu !== null ? `CPU ${c.cpu}` : c.tid === null ? '?' : String(c.tid), html`<code>${c.cache}</code>`, c.objects, c.bytes, c.spansAlone, c.bytesAlone]),
})}` : ''}`
}

function pageHeapTables(m: MemoryReport): Html {
  const p = m.pageHeap
  const h = m.hugePageFill
  return html`<h3>The page heap's free runs</h3>
${facts([
  ['free', `${bytes(p.normalBytes)} normal, ${bytes(p.returnedBytes)} returned to the system`],
  ['largest request served without growing', `${bytes(p.largestServableBytes)} (${num(p.largestRunPages)} pages)`],
])}
${dataTable({
  id: 'memory-runs',
  columns: [{title: 'pages', numeric: true}, {title: 'normal', numeric: true}, {title: 'returned', numeric: true}, {title: 'bytes', numeric: true}],
  rows: p.runs.map(x => [x.pages, x.normal, x.returned, x.pages * p.pageSize * (x.normal + x.returned)]),
})}
${m.splitters && m.splitters.count > 0 ? html`<h3>Live blocks between two free runs (${num(m.splitters.count)})</h3>
${dataTable({
  id: 'memory-splitters',
  columns: [{title: 'address'}, {title: 'pages', numeric: true}, {title: 'free before'}, {title: 'free after'}, {title: 'joined run', numeric: true}, {title: 'whole stretch', numeric: true}, {title: 'name'}, {title: 'holder'}],
  rows: m.splitters.spans.map(s => [html`<code>${s.address}</code>`, s.pages, `${s.before.pages} ${s.before.list}`, `${s.after.pages} ${s.after.list}`, s.joinedPages, s.stretchPages, s.name, s.holder ?? '']),
})}` : ''}
${h ? html`<h3>The huge-page filler</h3>
${facts([
  ['hugepages', `${num(h.hugePages)} of ${num(h.pagesPerHugePage)} pages: ${num(h.full)} full, ${num(h.partial)} partial, ${num(h.released)} with released pages`],
  ['pages', `${num(h.usedPages)} used, ${num(h.freePages)} free, ${num(h.releasedPages)} released`],
])}
${dataTable({
  id: 'memory-held-hugepages',
  columns: [{title: 'hugepage'}, {title: 'pages used', numeric: true}, {title: 'spans', numeric: true}, {title: 'live objects', numeric: true}, {title: 'live bytes', numeric: true}, {title: 'names (most bytes first)'}],
  rows: h.heldByFew.map(x => [html`<code>${x.start}</code>`, x.usedPages, x.spans, x.liveObjects, x.liveBytes, x.names.map(g => `${g.name}${g.holder ? ` (${g.holder})` : ''} ×${num(g.objects)}`).join(', ')]),
})}
<p class="dim">Hugepages held by a few pages: at most ${Math.round(h.heldShare * 100)} % of their pages in use.</p>` : ''}`
}

/**
 * Where the memory went (`toma memory`): every byte of the writable mappings once, as a table and
 * a treemap; the heap's parts; each size class's occupancy with a histogram; what pins the nearly
 * empty spans; the page heap's free runs and the huge-page filler. Every name from the core is
 * escaped by `html`.
 */
export function memorySection(m: MemoryReport): ReportSection {
  const a = m.accounting
  const body = html`${m.notYet ? html`<p class="warn">note: ${m.notYet}</p>` : ''}
<p>${bytes(a.mapped.bytes)} in ${num(a.mapped.mappings)} writable mappings (${bytes(a.mapped.inCore)} in the core file). <span class="dim">Mapped bytes: a core records no residency (Rss).</span></p>
${accountingTreemap(m)}
${accountingTables(m)}
${fragmentationTables(m)}
${pageHeapTables(m)}`
  return {id: 'memory', title: 'Where the memory went', body}
}
