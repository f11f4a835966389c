import readline from 'node:readline'
import type {Config} from '@oclif/core'
import chalk from 'chalk'
import {note, oneLine} from './base-command.js'
import {closest} from './nearest-names.js'
import type {IndexSession} from './index-session.js'
import {completeLine, type CompletionSource} from './shell-completion.js'
import {appendHistory, HISTORY_LINES, loadHistory} from './shell-history.js'
import {shellWords} from './shell-words.js'

const BUILTINS = ['help', 'exit', 'quit']
/**
 * Commands that make no sense inside the shell (help is the shell's own, with `help CMD` from
 * oclif's; serve runs until Ctrl-C, which the shell takes for itself, and closes the indexes the
 * shell keeps open).
 */
const NOT_IN_SHELL = new Set(['shell', 'help', 'serve'])

/**
 * The prompt loop of `toma shell`: each line is a toma command line without `toma`, run by the
 * same command classes as the CLI with the session's indexes kept open. A bad line prints one line
 * on stderr and the prompt goes on. At a terminal: a prompt, history (kept in the cache folder),
 * tab completion; from a pipe: the lines are run in order and only their output is written.
 */
export async function runShell(config: Config, session: IndexSession, types: readonly string[]): Promise<void> {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY)
  const source = completionSource(config, types)
  const rl = readline.createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: interactive,
    prompt: 'toma> ',
    ...(interactive ? {completer: (line: string) => completeLine(line, source), history: loadHistory(), historySize: HISTORY_LINES, removeHistoryDuplicates: true} : {}),
  })
  // Ctrl-C drops the line being typed, as a shell does; Ctrl-D (end of input) ends the sitting.
  rl.on('SIGINT', () => {
    process.stdout.write('^C\n')
    rl.write(null, {ctrl: true, name: 'u'})
    rl.prompt()
  })
  if (interactive) rl.prompt()
  for await (const raw of rl) {
    const line = raw.trim()
    if (line !== '' && interactive) appendHistory(line)
    if (line === 'exit' || line === 'quit') break
    if (line !== '' && !line.startsWith('#')) await runLine(config, session, line)
    if (interactive) rl.prompt()
  }
  rl.close()
  session.forget()
}

async function runLine(config: Config, session: IndexSession, line: string): Promise<void> {
  const say = note
  const parsed = shellWords(line)
  if ('problem' in parsed) return say(`${parsed.problem}; the line was not run`)
  const [first, ...argv] = parsed.words
  const id = first!
  if (id === 'help') {
    if (argv.length === 0) return void process.stdout.write(helpText(config))
    return commandHelp(config, argv[0]!, say)
  }
  const known = config.findCommand(id)
  if (!known || known.hidden || NOT_IN_SHELL.has(id)) {
    if (known && NOT_IN_SHELL.has(id)) return say(`${id} is not run inside the shell (help lists what is)`)
    return say(notACommand(config, id))
  }
  // oclif reads --help before the command runs (not inside it): the help command says the same.
  if (argv.includes('--help') || argv.includes('-h')) return commandHelp(config, id, say)
  await run(config, id, argv)
  // An analysis may have rewritten an index the session holds open.
  if (id === 'analyze') session.forget()
}

/**
 * `help CMD` and `CMD --help`: the text `toma help CMD` prints. Not through the `help` command:
 * that is @oclif/plugin-help's, which bin/run.js loads only when the command line asks for help
 * (not for `toma shell`), so the shell renders it with oclif's help class itself.
 */
async function commandHelp(config: Config, id: string, say: (text: string) => void): Promise<void> {
  // The shell's own words (help, exit, quit) are explained in its command list.
  if (BUILTINS.includes(id)) return void process.stdout.write(helpText(config))
  const known = config.findCommand(id)
  if (!known || known.hidden) return say(notACommand(config, id))
  const {loadHelpClass} = await import('@oclif/core/help')
  const Help = await loadHelpClass(config)
  await new Help(config).showHelp([id])
}

function notACommand(config: Config, id: string): string {
  const suggestion = closest(id, [...shellCommands(config).map(c => c.id), ...BUILTINS])
  return `${id} is not a toma command${suggestion ? `; did you mean ${suggestion}?` : ''} (help lists them)`
}

/** One command, as the CLI runs it; its exit status is its own, not the shell's. */
async function run(config: Config, id: string, argv: string[]): Promise<void> {
  const colour = chalk.level
  try {
    await config.runCommand(id, argv)
  } catch (e) {
    // Errors end in the commands' own catch (one line); anything else is a bug, said in one line too.
    const err = e as Error & {oclif?: {exit?: number}}
    if (err.oclif?.exit !== 0) note(oneLine(err.message ?? String(e)))
  } finally {
    chalk.level = colour
    process.exitCode = undefined
  }
}

function shellCommands(config: Config) {
  return config.commands.filter(c => !c.hidden && !NOT_IN_SHELL.has(c.id)).sort((a, b) => (a.id < b.id ? -1 : 1))
}

export function completionSource(config: Config, types: readonly string[]): CompletionSource {
  return {
    commands: shellCommands(config).map(c => ({
      id: c.id,
      flags: Object.entries(c.flags).map(([name, f]) => ({name, takesValue: f.type === 'option', ...(f.type === 'option' && f.options ? {options: f.options} : {})})),
    })),
    builtins: BUILTINS,
    types,
  }
}

function helpText(config: Config): string {
  const rows = shellCommands(config).map(c => [c.id, (c.summary ?? c.description ?? '').split('\n')[0]!] as const)
  const width = Math.max(...rows.map(r => r[0].length), 'exit, quit'.length)
  const line = (a: string, b: string) => `  ${a.padEnd(width)}  ${b}\n`
  return (
    'Commands (as on the command line, without `toma`; the core is the shell\'s unless one is given):\n' +
    rows.map(([a, b]) => line(a, b)).join('') +
    line('help CMD', 'the arguments and flags of CMD') +
    line('exit, quit', 'leave the shell (or Ctrl-D)')
  )
}
