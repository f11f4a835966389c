import chalk from 'chalk'
import type {Refs} from '../analysis/refs.js'
import {colourState} from './find-object.js'

type Brief = Refs['object']
const describe = (o: Brief) => `${chalk.bold(o.address)} ${o.type ?? chalk.dim('(untyped)')} ${o.size} B ${o.state === 'live' ? '' : colourState(o.state)}`.trimEnd()

export function refsText(r: Refs, options: {incoming: boolean; outgoing: boolean}): string {
  const out = [`object ${describe(r.object)}${r.offset ? `  (address is at +${r.offset})` : ''}`]
  if (options.incoming) {
    out.push('', chalk.bold(`Pointed to by ${r.incomingCount} object(s)${r.incoming.length < r.incomingCount ? `, first ${r.incoming.length} shown` : ''}`))
    for (const e of r.incoming) out.push(`  ${describe(e.from)} +${e.offset} → +${e.toOffset}`)
    out.push('', chalk.bold(`Roots (${r.roots.length})`))
    for (const x of r.roots) out.push(`  ${x.kind.padEnd(8)} ${x.label}${x.address ? ` @ ${x.address}` : ''} → +${x.toOffset}`)
    if (r.roots.length === 0) out.push(chalk.dim('  none: no root (register, stack, TLS, global, mapping, cached stack) points into it directly'))
    if (r.deeper.length) {
      out.push('', chalk.bold('Further up (incoming, breadth-first)'))
      for (const d of r.deeper) {
        out.push(`  ${'  '.repeat(d.depth - 2)}[${d.depth}] ${describe(d.object)} +${d.offset} → ${d.pointsInto}${d.roots.length ? `  (root: ${d.roots.map(x => x.label).join('; ')})` : ''}`)
      }
    }
  }
  if (options.outgoing) {
    out.push('', chalk.bold(`Points to (${r.outgoing.length})`))
    for (const e of r.outgoing) out.push(`  +${e.offset} → ${describe(e.to)} +${e.toOffset}`)
  }
  return out.join('\n')
}
