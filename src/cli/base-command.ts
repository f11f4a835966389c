import type {Command} from '@oclif/core/command'
import chalk from 'chalk'
import {TomaError} from '../errors.js'
import {FastCommand, fastLaunch} from './fast-command.js'
import * as Flags from './flags.js'
import {watchStandardOutput} from './standard-output.js'
import {silenceProgress} from '../util/terminal-progress.js'
import {printable, terminalSafe} from '../util/printable.js'

// On the fast path (bin/run.js) a command runs without oclif: loading oclif's Command, with its
// configuration, parser and terminal code, costs more than most queries. Elsewhere it is oclif's.
const Base = fastLaunch.active ? (FastCommand as unknown as typeof Command) : (await import('@oclif/core/command')).Command

/**
 * What every toma command shares: one clear line on stderr and a non-zero exit for any error
 * (never a stack trace unless TOMA_DEBUG is set), colour only when wanted.
 */
export abstract class TomaCommand extends Base {
  static override enableJsonFlag = true
  static override baseFlags = {
    quiet: Flags.boolean({description: 'no progress display on the terminal (it shows only when stderr is one)', helpGroup: 'GLOBAL'}),
  }

  protected override async init(): Promise<void> {
    await super.init()
    watchStandardOutput()
    // chalk does not honour NO_COLOR itself; JSON output is never coloured.
    if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') chalk.level = 0
    if (this.argv.includes('--json')) chalk.level = 0
    if (this.argv.includes('--quiet')) silenceProgress()
  }

  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<void> {
    if (err instanceof TomaError) {
      // Thrown by an argument's own check (a thread id that is not a number), the parse still ran.
      this.parsed = true
      note(err.message)
      process.exitCode = err.exitCode
      return
    }
    if (err.oclif) {
      // A parse that failed was still a parse: no "did not parse its arguments" warning after the message.
      this.parsed = true
      if (err.oclif.exit === 0) return
      note(missingArguments(err) ?? oneLine(err.message))
      process.exitCode = err.oclif.exit ?? 2
      return
    }
    if (process.env.TOMA_DEBUG) process.stderr.write(`${err.stack}\n`)
    note(`internal error: ${oneLine(err.message)} (set TOMA_DEBUG=1 for details)`)
    process.exitCode = 70
  }

  // The last guard of src/util/printable.ts, where a command's text leaves for the terminal (`note`
  // lines are printable whole; TextSink guards what it writes to standard output).
  override log(message = '', ...args: unknown[]): void {
    super.log(terminalSafe(message), ...args.map(a => (typeof a === 'string' ? terminalSafe(a) : a)))
  }

  /** As oclif's (pretty, no theme), through the guard: JSON.stringify leaves DEL and C1 raw. */
  override logJson(json: unknown): void {
    process.stdout.write(`${terminalSafe(JSON.stringify(json, null, 2))}\n`)
  }
}

/**
 * One line on stderr, `toma: …`: a warning, a note, an error. A line is one line: whatever it
 * quotes from the core or the command line (a module path, a file name) is made printable.
 */
export function note(line: string): void {
  process.stderr.write(`toma: ${printable(line)}\n`)
}

/**
 * oclif's missing-argument error lists the arguments in columns wrapped to the terminal's width;
 * said from the arguments themselves it reads whole on one line.
 */
function missingArguments(err: Error & {args?: unknown}): string | undefined {
  if (!err.message.startsWith('Missing') || !Array.isArray(err.args)) return undefined
  const args = err.args as Array<{name?: string; description?: string}>
  const named = args.map(a => `${(a.name ?? '?').toUpperCase()}${a.description ? ` (${a.description})` : ''}`)
  return `missing required argument${args.length === 1 ? '' : 's'}: ${named.join(', ')}; see --help`
}

/**
 * The whole of a multi-line message (oclif lists the missing argument, the conflicting flags or the
 * allowed range on the lines after its first) as one line: a line ending in ':' runs on into the
 * next, other lines are separated by '; ', and column padding shrinks to one space.
 */
export function oneLine(message: string): string {
  const lines = message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map(s => s.replace(/\s+/g, ' ').trim())
    .filter(s => s.length > 0)
  if (lines.length === 0) return message
  return lines.reduce((all, line) => `${all}${/[:;,]$/.test(all) ? ' ' : '; '}${line}`)
}

/** Flags that say where a core's module files are. */
export const moduleFlags = {
  exe: Flags.string({description: 'the executable the core was dumped from'}),
  tcmalloc: Flags.string({description: 'the libtcmalloc shared library the process ran with'}),
  sysroot: Flags.string({description: 'look up the core\'s file paths under this folder first'}),
  'solib-search-path': Flags.string({description: 'colon-separated folders to search for shared libraries by name'}),
  'debug-file-directory': Flags.string({description: 'colon-separated folders of separate debug files (default /usr/lib/debug)'}),
}
