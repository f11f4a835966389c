import chalk from 'chalk'
import type {ObjectInfo} from '../analysis/object-info.js'

export function findObjectText(info: ObjectInfo): string {
  if (!info.heap) return `${info.address} is not in the TCMalloc heap: ${info.label}${info.root ? `\nscanned as a ${info.root.kind} root: ${info.root.label}` : ''}`
  const o = info.object
  const lines = [
    `${chalk.bold(info.address)} is ${o.offset === 0 ? 'the start' : `offset ${o.offset} (0x${o.offset.toString(16)})`} of object ${chalk.bold(o.address)}`,
    `  size ${o.size}  size class ${o.sizeClass || 'none (large span)'}  state ${colourState(o.state)}${o.thread ? ` (thread ${o.thread.tid ?? '?'}, cache ${o.thread.threadCache})` : ''}`,
    `  type ${o.type ?? chalk.dim('unknown (no vtable)')}`,
    `  span ${o.span.record}: ${o.span.pages} page(s) from ${o.span.start}`,
  ]
  if (o.bytes) {
    for (let at = 0; at < o.bytes.hex.length / 2; at += 16) {
      const hexPart = o.bytes.hex.slice(at * 2, at * 2 + 32).replace(/(..)/g, '$1 ').trimEnd()
      lines.push(`  ${chalk.dim('+' + at.toString(16).padStart(3, '0'))}  ${hexPart.padEnd(47)}  ${o.bytes.ascii.slice(at, at + 16)}`)
    }
  } else lines.push(chalk.yellow('  (bytes not in the core)'))
  if (o.strings) {
    if (o.strings.cString !== null) lines.push(`  C string: ${JSON.stringify(o.strings.cString)}`)
    const s = o.strings.stdString
    if (s) lines.push(`  std::string buffer of the string at ${'0x' + (s.owner + s.offset).toString(16)} (object 0x${s.owner.toString(16)}+${s.offset}), length ${s.length}: ${JSON.stringify(s.text)}`)
    if (o.strings.cString === null && !s) lines.push(chalk.dim('  no string here'))
  }
  return lines.join('\n')
}

export function colourState(state: string): string {
  return state === 'live' ? chalk.green(state) : chalk.yellow(state)
}
