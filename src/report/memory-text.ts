import chalk from 'chalk'
import type {MemoryReport} from '../queries/memory.js'
import {printableData} from '../util/printable.js'
import {bytes, heading, table} from './table.js'

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : '-')

/** `toma memory`: the accounting, the fragmentation by size class, what pins the spans, the page heap's free runs. */
export function memoryText(report: MemoryReport, rows: number): string {
  const r = printableData(report)
  const a = r.accounting
  const out: string[] = []
  if (r.notYet) out.push(chalk.yellow(`note: ${r.notYet}`), '')
  out.push(heading(`Every byte of the writable mappings once: ${bytes(a.mapped.bytes)} in ${a.mapped.mappings} mappings (${bytes(a.mapped.inCore)} in the core file)`))
  out.push(chalk.dim('mapped bytes: a core records no residency (Rss)'))
  const lineRows: Array<Array<string | number>> = a.lines.map(l => [l.part, l.bytes, pct(l.bytes, a.mapped.bytes), l.inCore ?? '', l.allocator ? l.allocator.bytes : '', l.allocator?.property ?? ''])
  lineRows.push(['remainder (no line explains it)', a.remainder, pct(a.remainder, a.mapped.bytes), '', '', ''])
  out.push(table(['part', '#bytes', '#share', '#in the core file', '#allocator says', 'property'], lineRows))
  out.push('', heading(`The heap's spans: ${bytes(a.heap.bytes)}`))
  out.push(table(['part', '#bytes', '#share', '#allocator says', 'property'], a.heap.parts.map(l => [l.part, l.bytes, pct(l.bytes, a.heap.bytes), l.allocator ? l.allocator.bytes : '', l.allocator?.property ?? ''])))
  for (const l of [...a.lines, ...a.heap.parts]) if (l.note) out.push(chalk.dim(`${l.part}: ${l.note}`))
  if (a.heap.outsideSegments > 0) out.push(chalk.yellow(`${a.heap.outsideSegments} bytes of spans lie in no writable segment of the core: in no line above`))
  if (a.stacks.length > 0) {
    out.push('', heading('Thread stacks'))
    out.push(table(['#tid', 'mapping', '#bytes', '#above sp'], a.stacks.map(s => [String(s.tid), s.mapping, s.bytes, s.aboveSp])))
  }
  const f = r.fragmentation
  const share = `${Math.round(f.pinnedShare * 100)} %`
  out.push('', heading(`Size classes: how full their spans are (pinned: some live, at most ${share} of the slots)`))
  out.push(
    table(
      ['#class', '#size', '#spans', '#slots/span', '#live', 'spans by % live (0-10 … 90-100)', '#empty', '#free in partial spans (central/transfer/thread)', '#pinned', '#pinned bytes'],
      f.classes.slice(0, rows).map(c => [c.sizeClass, c.size, c.spans, c.objectsPerSpan, c.liveObjects, c.occupancy.join(' '), c.emptySpans,
        `${c.partial.freeBytes.central} / ${c.partial.freeBytes.transfer} / ${c.partial.freeBytes.threadCaches}`, c.pinned.spans, c.pinned.bytes]),
    ),
  )
  if (f.classes.length > rows) out.push(chalk.dim(`… ${f.classes.length - rows} more classes (--json lists them all)`))
  out.push('', heading('What pins them: live objects in pinned spans, by name and holder'))
  out.push(table(['#objects', '#bytes', '#spans', '#pinned alone', '#freeing returns', 'name', 'holder'], f.pinners.slice(0, rows).map(g => [g.objects, g.bytes, g.spans, g.spansAlone, g.bytesReturned, g.name, g.holder ?? ''])))
  if (f.cachePins.length > 0) {
    out.push('', heading('Free objects cached by threads in pinned or empty spans'))
    out.push(table(['#tid', 'cache', '#objects', '#bytes', '#empty spans it alone keeps', '#their bytes'], f.cachePins.map(c => [c.tid === null ? '?' : String(c.tid), c.cache, c.objects, c.bytes, c.spansAlone, c.bytesAlone])))
  }
  const p = r.pageHeap
  out.push('', heading(`The page heap's free runs: ${bytes(p.normalBytes)} normal, ${bytes(p.returnedBytes)} returned; largest request served without growing: ${bytes(p.largestServableBytes)} (${p.largestRunPages} pages)`))
  out.push(table(['#pages', '#normal', '#returned', '#bytes'], p.runs.map(x => [x.pages, x.normal, x.returned, x.pages * p.pageSize * (x.normal + x.returned)])))
  return out.join('\n')
}
