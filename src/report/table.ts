import chalk from 'chalk'
import {grouped} from '../util/grouped.js'
import {printable} from '../util/printable.js'

/** Left-aligned text columns; numbers (right-aligned) when the column's header starts with '#'. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const right = headers.map(h => h.startsWith('#'))
  const titles = headers.map(h => h.replace(/^#/, ''))
  const cells = rows.map(r => r.map(c => (typeof c === 'number' ? grouped(c) : c)))
  const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '')
  const widths = titles.map((t, i) => Math.max(t.length, ...cells.map(r => plain(r[i] ?? '').length)))
  // A left-aligned last column is not padded: no line ends in spaces (inside colour codes either).
  const pad = (s: string, i: number) => {
    if (!right[i] && i === widths.length - 1) return s
    const gap = ' '.repeat(Math.max(0, widths[i]! - plain(s).length))
    return right[i] ? gap + s : s + gap
  }
  const lines = [titles.map((t, i) => chalk.bold(pad(t, i))).join('  ').trimEnd()]
  for (const r of cells) lines.push(r.map((c, i) => pad(c ?? '', i)).join('  ').trimEnd())
  return lines.join('\n')
}

export function heading(text: string): string {
  return chalk.bold.underline(text)
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`
}

/** The line that opens every query's text answer: which core it is about. */
export function aboutCore(corePath: string): string {
  return `${chalk.dim('core')} ${printable(corePath)}`
}
