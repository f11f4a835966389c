import type {Hook} from '@oclif/core'
import pluginNotFound from '@oclif/plugin-not-found'
import {printable} from '../util/printable.js'
import {EXIT_USAGE} from './exit-codes.js'
import {closest} from './nearest-names.js'

/**
 * An unknown command. At a terminal, @oclif/plugin-not-found asks "Did you mean …?" and runs the
 * suggestion when confirmed. Elsewhere that plugin prints no suggestion and two lines, so toma
 * says it in one line itself: the command given, the closest one, and where the list is.
 * Either way the exit status is bad usage's, 2 (README, "Exit codes"), not the plugin's 127.
 */
const hook: Hook.CommandNotFound = async function (options) {
  if (process.stdin.isTTY && process.stderr.isTTY) {
    try {
      return await pluginNotFound.call(this, options)
    } catch (e) {
      const err = e as Error & {oclif?: {exit?: number}}
      if (err.oclif?.exit === 127) this.error(err.message, {exit: EXIT_USAGE})
      throw e
    }
  }
  // With a space as topic separator oclif hands over the arguments joined to the id; toma has no topics.
  const given = options.id.split(':')[0]!
  // `help` is a plugin's command, loaded only when help is asked for (bin/run.js): named here all the same.
  const known = [...new Set(['help', ...options.config.commands.filter(c => !c.hidden).flatMap(c => [c.id, ...c.aliases])])]
  const suggestion = closest(given, known)
  process.stderr.write(`toma: ${printable(given)} is not a toma command${suggestion ? `; did you mean ${suggestion.replaceAll(':', ' ')}?` : ''} (toma help lists them all)\n`)
  this.exit(EXIT_USAGE)
}

export default hook
