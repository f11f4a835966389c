import chalk from 'chalk'
import type {MemoryReport} from '../queries/memory.js'
import {grouped} from '../util/grouped.js'
import {printableData} from '../util/printable.js'
import {bytes, heading, table} from './table.js'
import {anchorText} from '../queries/mapping-anchors.js'

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : '-')

/** `toma memory`: the accounting, the fragmentation by size class, what pins the spans, the page heap's free runs. */
export function memoryText(report: MemoryReport, rows: number): string {
  const r = printableData(report)
  const a = r.accounting
  const out: string[] = []
  if (r.notYet) out.push(chalk.yellow(`note: ${r.notYet}`), '')
  out.push(heading(`Every byte of the writable mappings once: ${bytes(a.mapped.bytes)} in ${a.mapped.mappings} mappings (${bytes(a.mapped.inCore)} in the core file)`))
  out.push(chalk.dim('mapped bytes: a core records no residency (Rss)'))
  const lineRows: Array<Array<string | number>> = a.lines.map(l => [l.part, l.bytes, pct(l.bytes, a.mapped.bytes), l.inCore ?? '', l.allocator ? l.allocator.bytes : '', l.allocator?.property ?? l.property ?? ''])
  lineRows.push(['remainder (no line explains it)', a.remainder, pct(a.remainder, a.mapped.bytes), '', '', ''])
  out.push(table(['part', '#bytes', '#share', '#in the core file', '#allocator says', 'property'], lineRows))
  out.push('', heading(`The heap's spans: ${bytes(a.heap.bytes)}`))
  // A line's places (google/tcmalloc's page heap) follow it, indented: they add up to it.
  const heapRows = a.heap.parts.flatMap(l => [l, ...(l.parts ?? []).map(x => ({...x, part: `  of which ${x.part}`}))])
  out.push(table(['part', '#bytes', '#share', '#allocator says', 'property'], heapRows.map(l => [l.part, l.bytes, pct(l.bytes, a.heap.bytes), l.allocator ? l.allocator.bytes : '', l.allocator?.property ?? l.property ?? ''])))
  for (const l of [...a.lines, ...a.heap.parts]) if (l.note) out.push(chalk.dim(`${l.part}: ${l.note}`))
  for (const o of a.otherAllocators) {
    const line = a.lines.find(l => l.part.startsWith(o.allocator))!
    out.push('', heading(`${o.allocator}: ${bytes(line.bytes)} (${o.foundAt})`))
    if (o.parts.length) out.push(table(['part', '#bytes', '#share', '#chunks', 'note'], o.parts.map(p => [p.part, p.bytes, pct(p.bytes, line.bytes), p.blocks, p.note ?? ''])))
    for (const n of o.notes) out.push(chalk.yellow(`note: ${n}`))
  }
  if (a.heap.outsideSegments > 0) out.push(chalk.yellow(`${a.heap.outsideSegments} bytes of spans lie in no writable segment of the core: in no line above`))
  if (a.stacks.length > 0) {
    out.push('', heading('Thread stacks'))
    out.push(table(['#tid', 'mapping', '#bytes', '#above sp'], a.stacks.map(s => [String(s.tid), s.mapping, s.bytes, s.aboveSp])))
  }
  if (a.anonymousMappings.length > 0) {
    out.push('', heading('Other anonymous mappings, with what points into them'))
    const anchors = (m: (typeof a.anonymousMappings)[number]) => (m.anchors.length ? m.anchors.map(anchorText).join('; ') : 'no anchor found')
    out.push(table(['mapping', '#bytes', '#in the core file', 'anchored by (a word of a global, a stack, a TLS block or a live heap block, in the core, pointing into it)'], a.anonymousMappings.slice(0, rows).map(m => [m.mapping, m.bytes, m.inCore, anchors(m)])))
    if (a.anonymousMappings.length > rows) out.push(chalk.dim(`… ${a.anonymousMappings.length - rows} more mappings (--json lists them all)`))
  }
  const f = r.fragmentation
  const share = `${Math.round(f.pinnedShare * 100)} %`
  out.push('', heading(`Size classes: how full their spans are (pinned: some live, at most ${share} of the slots)`))
  out.push(
    table(
      ['#class', '#size', '#spans', '#slots/span', '#live', 'spans by % live (0-10 … 90-100)', '#empty', '#free in partial spans (central/transfer/thread)', '#pinned', '#pinned bytes'],
      f.classes.slice(0, rows).map(c => [c.sizeClass, c.size, c.spans, c.objectsPerSpan, c.liveObjects, c.occupancy.join(' '), c.emptySpans,
        `${grouped(c.partial.freeBytes.central)} / ${grouped(c.partial.freeBytes.transfer)} / ${grouped(c.partial.freeBytes.threadCaches)}`, c.pinned.spans, c.pinned.bytes]),
    ),
  )
  if (f.classes.length > rows) out.push(chalk.dim(`… ${f.classes.length - rows} more classes (--json lists them all)`))
  out.push('', heading('What pins them: live objects in pinned spans, by name and holder'))
  out.push(table(['#objects', '#bytes', '#spans', '#pinned alone', '#freeing returns', 'name', 'holder'], f.pinners.slice(0, rows).map(g => [g.objects, g.bytes, g.spans, g.spansAlone, g.bytesReturned, g.name, g.holder ?? ''])))
  if (f.cachePins.length > 0) {
    out.push('', heading('Free objects cached by threads in pinned or empty spans'))
    out.push(table(['#thread or CPU', 'cache', '#objects', '#bytes', '#empty spans it alone keeps', '#their bytes'], f.cachePins.map(c => [c.cpu !== null ? `CPU ${c.cpu}` : c.tid === null ? '?' : String(c.tid), c.cache, c.objects, c.bytes, c.spansAlone, c.bytesAlone])))
  }
  const p = r.pageHeap
  out.push('', heading(`The page heap's free runs: ${bytes(p.normalBytes)} normal, ${bytes(p.returnedBytes)} returned; largest request served without growing: ${bytes(p.largestServableBytes)} (${p.largestRunPages} pages)`))
  out.push(table(['#pages', '#normal', '#returned', '#bytes'], p.runs.map(x => [x.pages, x.normal, x.returned, x.pages * p.pageSize * (x.normal + x.returned)])))
  if (r.splitters) out.push('', ...splittersText(r.splitters, rows))
  else out.push(chalk.dim(`live blocks between free runs: not told for ${r.allocator ?? 'this allocator'} (its free pages are not all spans of the index)`))
  if (r.hugePageFill) out.push('', ...hugePageFillText(r.hugePageFill, rows))
  return out.join('\n')
}

/** Live spans between two free runs: what freeing each would join (pages), largest first. */
function splittersText(x: NonNullable<MemoryReport['splitters']>, rows: number): string[] {
  const side = (n: {pages: number; list: string}) => `${n.pages} ${n.list}`
  const out = [heading(`Live blocks between two free runs: ${grouped(x.count)}; freeing one joins its normal neighbours (every neighbour when decommit is aggressive)`)]
  if (x.count === 0) return out
  out.push(table(['address', '#pages', '#free before', '#free after', '#joined run', '#whole stretch', 'name', 'holder'],
    x.spans.slice(0, rows).map(s => [s.address, s.pages, side(s.before), side(s.after), s.joinedPages, s.stretchPages, s.name, s.holder ?? ''])))
  if (x.count > x.spans.length) out.push(chalk.dim(`… ${x.count - x.spans.length} more (--rows)`))
  return out
}

/** The huge-page filler: its hugepages by share of pages used, and what holds those a few pages keep. */
function hugePageFillText(h: NonNullable<MemoryReport['hugePageFill']>, rows: number): string[] {
  const n = h.pagesPerHugePage
  const byShare = new Array<number>(10).fill(0)
  h.byUsedPages.forEach((count, used) => (byShare[Math.min(9, Math.floor((used * 10) / n))]! += count))
  const out = [
    heading(`The huge-page filler: ${grouped(h.hugePages)} hugepages of ${n} pages (${grouped(h.full)} full, ${grouped(h.partial)} partial, ${grouped(h.released)} with released pages)`),
    `pages used ${grouped(h.usedPages)}, free ${grouped(h.freePages)}, released ${grouped(h.releasedPages)}`,
    `hugepages by % of pages used (0-10 … 90-100): ${byShare.join(' ')}`,
  ]
  const share = `${Math.round(h.heldShare * 100)} %`
  if (h.heldByFew.length === 0) return [...out, chalk.dim(`no hugepage is held by at most ${share} of its pages`)]
  out.push('', heading(`Hugepages held by a few pages (at most ${share} used): what holds them`))
  out.push(
    table(
      ['hugepage', '#pages used', '#spans', '#live objects', '#live bytes', 'names (most bytes first)'],
      h.heldByFew.slice(0, rows).map(x => [x.start, x.usedPages, x.spans, x.liveObjects, x.liveBytes, x.names.map(g => `${g.name}${g.holder ? ` (${g.holder})` : ''} ×${grouped(g.objects)}`).join(', ')]),
    ),
  )
  if (h.heldByFew.length > rows) out.push(chalk.dim(`… ${h.heldByFew.length - rows} more hugepages (--json lists them all)`))
  return out
}
