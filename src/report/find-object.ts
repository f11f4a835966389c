import chalk from 'chalk'
import type {ObjectInfo} from '../queries/object-info.js'
import type {Allocation} from '../queries/allocations.js'
import {aboutCore} from './table.js'
import {ALLOCATOR_OWN, byteSize, count, namingWords, offset, sightingText} from './wording.js'
import {grouped} from '../util/grouped.js'
import {printable, printableData} from '../util/printable.js'

export function findObjectText(raw: ObjectInfo, core: string): string {
  const info = printableData(raw)
  const about = aboutCore(core)
  if (!info.heap) return `${about}\n${info.address} is not in the TCMalloc heap: ${info.label}${info.root ? `\nscanned as a ${info.root.kind} root: ${info.root.label}` : ''}`
  const o = info.object
  const lines = [
    about,
    `${chalk.bold(info.address)} is ${o.offset === 0 ? 'the start' : `offset ${o.offset} (0x${o.offset.toString(16)})`} of object #${o.id} ${chalk.bold(o.address)}`,
    `  size ${byteSize(o.size)}  size class ${o.sizeClass || 'none (large span)'}  state ${colourState(o.state)}${o.thread ? (o.thread.cpu !== null ? ` (CPU ${o.thread.cpu}'s cache ${o.thread.threadCache})` : ` (thread ${o.thread.tid ?? '?'}, cache ${o.thread.threadCache})`) : ''}`,
    nameLine(o),
    ...(o.held
      ? [
          `  ${o.held.reachable ? 'reachable from a root' : o.held.allocatorOwn ? ALLOCATOR_OWN : chalk.yellow('leaked: no root reaches it')}; retains ${grouped(o.held.retained.bytes)} B in ${grouped(o.held.retained.objects)} object(s); immediate dominator ${o.held.immediateDominator ? `${o.held.immediateDominator.address} ${o.held.immediateDominator.type ?? '(untyped)'}` : o.held.onlyThread !== null ? `none: only thread ${o.held.onlyThread}'s registers, stack and TLS reach it` : o.held.reachable ? 'none (held directly by roots)' : o.held.allocatorOwn ? 'none' : 'none (it starts a leaked structure)'}`,
        ]
      : o.state === 'live' && !o.graph
        ? [chalk.dim('  who holds it, its retained size and names past the vtable: not known yet (the index holds the heap model; toma refs, path or analyze builds the graph)')]
        : []),
    ...o.lastSeen.map(x => `  ${chalk.dim(sightingText(x))}`),
    `  span ${o.span.record}: ${count(o.span.pages, 'page')} from ${o.span.start}`,
    ...allocationLines(o.allocation),
  ]
  const b = o.bytes
  if (b) {
    lines.push(`  bytes ${offset(b.offset)} to ${offset(b.offset + b.length)} of ${byteSize(o.size)}${b.length < o.size ? ' (--bytes N shows more)' : ''}:`)
    for (let at = 0; at < b.length; at += 16) {
      const rel = b.offset + at
      const here = o.offset >= rel && o.offset < rel + 16
      const hexPart = b.hex.slice(at * 2, at * 2 + 32).replace(/(..)/g, '$1 ').trimEnd()
      lines.push(`${here ? chalk.bold('→') : ' '} ${chalk.dim('+' + rel.toString(16).padStart(3, '0'))}  ${hexPart.padEnd(47)}  ${b.ascii.slice(at, at + 16)}`)
    }
    for (const w of b.words) {
      const to = w.to.kind === 'object' ? `object #${w.to.id} ${w.to.address}${w.to.offset ? offset(w.to.offset) : ''} ${w.to.state}${w.to.type ? ` ${w.to.type}` : ''}` : w.to.label
      lines.push(`  ${chalk.dim('+' + w.offset.toString(16).padStart(3, '0'))}  ${w.value} → ${to}`)
    }
  } else lines.push(chalk.yellow('  (bytes not in the core)'))
  // Quoted from the raw text: JSON's escapes (\n, \", \\), then printable's for what JSON leaves (DEL, C1).
  const strings = raw.heap ? raw.object.strings : null
  if (strings) {
    if (strings.cString !== null) lines.push(`  C string: ${quoted(strings.cString)}`)
    const s = strings.stdString
    if (s) lines.push(`  std::string buffer of the string at ${'0x' + (s.owner + s.offset).toString(16)} (object 0x${s.owner.toString(16)}${offset(s.offset)}), length ${s.length}: ${quoted(s.text)}`)
    if (strings.cString === null && !s) lines.push(chalk.dim('  no string here'))
  }
  return lines.join('\n')
}

const quoted = (text: string) => printable(JSON.stringify(text))

/** `type app::Order (vtable)`, `name std::string buffer (layout)`, `held by g_roots+0x38 (a holder name, not a type: …)`. */
function nameLine(o: {type: string | null; name: string | null; via: string | null; state: string}): string {
  const w = namingWords(o)
  return `  ${w.lead ? `${w.lead} ` : ''}${w.name !== null ? `${w.name} ` : ''}${chalk.dim(w.note)}`
}

/** A sampled object's record: the bytes asked for and the stack that allocated it, innermost first. */
function allocationLines(a: Allocation | null): string[] {
  if (!a) return []
  return [
    `  sampled by TCMalloc: ${grouped(a.requestedSize)} B requested, allocated at:`,
    ...a.stack.map((f, i) => `    #${i} ${f.address} ${f.symbol ?? chalk.dim('(no symbol)')}`),
  ]
}

export function colourState(state: string): string {
  return state === 'live' ? chalk.green(state) : chalk.yellow(state)
}
