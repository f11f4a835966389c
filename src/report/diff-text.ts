import chalk from 'chalk'
import type {CoreDiff} from '../queries/diff.js'
import type {FragmentationChange} from '../queries/diff-fragmentation.js'
import type {ObjectBrief} from '../queries/object-brief.js'
import {bytes, heading, table} from './table.js'
import {grouped} from '../util/grouped.js'
import {printableData} from '../util/printable.js'

/** A change in objects with its sign: "+1,200", "-300", "0". */
export const signed = (n: number) => (n > 0 ? `+${grouped(n)}` : grouped(n))
/** A change in bytes with its sign: "+112.5 KiB". */
export const signedBytes = (n: number) => (n < 0 ? `-${bytes(-n)}` : `+${bytes(n)}`)
const kind = (o: ObjectBrief) => o.type ?? (o.sizeClass ? `untyped (class ${o.sizeClass}, ${o.size} B)` : `untyped large block (${grouped(o.size)} B)`)

/** A holder that grew, in words (the text and the HTML report say it alike): "+84.4 KiB", "under app::Cache at 0x…", ", via +0x8 → …", "retained … → …". */
export function growthWords(growth: CoreDiff['growth'][number]) {
  const g = printableData(growth)
  const via = g.via ? `, via ${g.via.offset === null ? 'a pointer inside it' : `+0x${g.via.offset.toString(16)}`} → ${g.via.child.address} ${kind(g.via.child)} (${signedBytes(g.via.growth)}${g.via.born ? ', born' : ''})` : ''
  return {growth: signedBytes(g.growth), holder: `under ${kind(g.holder)} at ${g.holder.address}${via}`, retained: `retained ${bytes(g.retainedBefore)} → ${bytes(g.retainedAfter)}`}
}

/** The diff's totals in one line. */
export function totalsLine(d: CoreDiff): string {
  const t = d.totals
  return `objects born ${grouped(t.born.objects)} (${bytes(t.born.bytes)}), died ${grouped(t.died.objects)} (${bytes(t.died.bytes)}), kept ${grouped(t.kept.objects)} (${bytes(t.kept.bytes)}); net ${signedBytes(t.born.bytes - t.died.bytes)}`
}

/** `toma diff` as text: totals, per type, the holders that grew, TCMalloc's states. */
export function diffText(diff: CoreDiff, rows: number): string {
  const d = printableData(diff)
  const out = [
    `${chalk.dim('before')} ${d.before.core} (pid ${d.before.pid})`,
    `${chalk.dim('after ')} ${d.after.core} (pid ${d.after.pid})`,
    totalsLine(d),
    '',
    heading('Live objects by type: born, died, kept'),
  ]
  const changed = d.types.filter(r => r.born.objects || r.died.objects)
  out.push(
    table(
      ['#born', '#born bytes', '#died', '#died bytes', '#kept', '#net', '#net bytes', 'type'],
      changed.slice(0, rows).map(r => [r.born.objects, r.born.bytes, r.died.objects, r.died.bytes, r.kept.objects, signed(r.net.objects), signed(r.net.bytes), r.type]),
    ),
  )
  if (changed.length > rows) out.push(chalk.dim(`… ${changed.length - rows} more types changed (--limit, or --json for all)`))
  if (changed.length === 0) out.push('no type changed')
  out.push('', heading('Kept objects whose retained size grew most'))
  if (d.growth.length === 0) out.push('none grew')
  for (const g of d.growth) {
    const w = growthWords(g)
    out.push(`${chalk.bold(w.growth)} ${w.holder}  ${chalk.dim(w.retained)}`)
  }
  out.push('', heading('TCMalloc: bytes per state'))
  out.push(table(['state', '#before', '#after', '#change'], d.states.map(s => [s.state, s.before.bytes, s.after.bytes, signed(s.change.bytes)])))
  out.push('', ...fragmentationText(d.fragmentation, rows))
  for (const w of d.warnings) out.push(chalk.yellow(`warning: ${w}`))
  return out.join('\n')
}

/** How fragmentation changed: the size classes that changed (in the query's order), the page heap's free bytes, the heap's lines. */
function fragmentationText(f: FragmentationChange, rows: number): string[] {
  const out = [heading(`Fragmentation: size classes whose spans grew beyond their live bytes first (${f.order})`)]
  const changed = f.classes.filter(c => c.spans.change || c.liveObjects.change || c.partialFreeBytes.change)
  const arrow = (c: {before: number; after: number}) => `${grouped(c.before)} → ${grouped(c.after)}`
  out.push(
    table(
      ['#class', '#size', '#spans', '#span bytes', '#live objects', '#live bytes', '#free in partial spans', '#span − live bytes'],
      changed.slice(0, rows).map(c => [c.sizeClass, c.size, `${arrow(c.spans)} (${signed(c.spans.change)})`, signed(c.spanBytes.change), `${arrow(c.liveObjects)} (${signed(c.liveObjects.change)})`,
        signed(c.liveBytes.change), `${arrow(c.partialFreeBytes)} (${signed(c.partialFreeBytes.change)})`, signed(c.spanBytes.change - c.liveBytes.change)]),
    ),
  )
  if (changed.length > rows) out.push(chalk.dim(`… ${changed.length - rows} more classes changed (--limit, or --json for all)`))
  if (changed.length === 0) out.push('no size class changed')
  const p = f.pageHeapFree
  out.push(`page heap free: normal ${bytes(p.normal.before)} → ${bytes(p.normal.after)} (${signedBytes(p.normal.change)}), returned ${bytes(p.returned.before)} → ${bytes(p.returned.after)} (${signedBytes(p.returned.change)})`)
  const a = f.accounting
  const lines = [{part: 'heap (the allocator\'s spans)', ...a.heap}, ...a.parts.map(l => ({...l, part: `  ${l.part}`}))]
  out.push(table(['heap bytes', '#before', '#after', '#change'], lines.map(l => [l.part, l.before, l.after, signed(l.change)])))
  return out
}
