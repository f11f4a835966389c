import chalk from 'chalk'
import type {Refs} from '../queries/refs.js'
import {colourState} from './find-object.js'
import {aboutCore} from './table.js'
import {byteSize, count, offset, sightingText, untypedKind, withCut} from './wording.js'
import {grouped} from '../util/grouped.js'
import {printableData} from '../util/printable.js'

type Brief = Refs['object']
const describe = (o: Brief) => `${chalk.bold(o.address)} #${o.id} ${o.type ?? chalk.dim(untypedKind(o))} ${byteSize(o.size)} ${o.state === 'live' ? '' : colourState(o.state)}`.trimEnd()

export function refsText(refs: Refs, core: string, options: {incoming: boolean; outgoing: boolean}): string {
  const r = printableData(refs)
  const out = [aboutCore(core), `object ${describe(r.object)}${r.offset ? `  (address is at ${offset(r.offset)})` : ''}`]
  const s = r.selfReferences
  if (s.count > 0) {
    const offsets = s.first.map(e => `${offset(e.offset)} → ${offset(e.toOffset)}`).join(', ')
    out.push(`${count(s.count, 'word')} of it point${s.count === 1 ? 's' : ''} into itself (self-references, not counted as referrers): ${offsets}${s.first.length < s.count ? ', …' : ''}`)
  }
  if (options.incoming) {
    out.push('', chalk.bold(withCut(`Pointed to by ${count(r.incomingCount, 'pointer')} from other objects`, r.incoming.length, r.incomingCount)))
    for (const e of r.incoming) out.push(`  ${describe(e.from)} ${offset(e.offset)} → ${offset(e.toOffset)}`)
    out.push('', chalk.bold(withCut(`Roots (${grouped(r.rootCount)})`, r.roots.length, r.rootCount)))
    for (const x of r.roots) out.push(`  ${x.kind.padEnd(8)} ${x.label}${x.address ? ` @ ${x.address}` : ''} → ${offset(x.toOffset)}`)
    for (const x of r.lastSeen) out.push(chalk.dim(`  not a root: ${sightingText(x)}`))
    if (r.rootCount === 0) out.push(chalk.dim('  none: no root (register, stack, TLS, global, mapping, cached stack) points into it directly'))
    if (r.deeper.length) {
      out.push('', chalk.bold(`Further up (incoming, breadth-first)${r.deeperCut ? ': cut by --limit or the walk bound, more referrers exist' : ''}`))
      for (const d of r.deeper) {
        out.push(`  ${'  '.repeat(d.depth - 2)}[${d.depth}] ${describe(d.object)} ${offset(d.offset)} → ${d.pointsInto}${d.roots.length ? `  (root: ${d.roots.map(x => x.label).join('; ')})` : ''}`)
      }
    }
  }
  if (options.outgoing) {
    out.push('', chalk.bold(withCut(`Points to other objects with ${count(r.outgoingCount, 'pointer')}`, r.outgoing.length, r.outgoingCount)))
    for (const e of r.outgoing) out.push(`  ${offset(e.offset)} → ${describe(e.to)} ${offset(e.toOffset)}`)
  }
  return out.join('\n')
}
