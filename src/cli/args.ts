import type * as OclifArgs from '@oclif/core/args'
import {TomaError} from '../errors.js'
import {integerValue, valueDefinition} from './flags.js'

/**
 * The argument kinds toma's commands use (string, integer), built exactly as `@oclif/core/args`
 * builds them (same fields, same parse and messages), for the reason src/cli/flags.ts gives:
 * oclif's module and the helpers it loads cost a few ms of every call's start-up.
 */
type Options = Record<string, unknown>

const custom = (defaults: Options) => (options: Options = {}) => ({...valueDefinition(defaults, options), type: 'option'})

export const string = custom({}) as unknown as typeof OclifArgs.string

export const integer = custom({
  // oclif's integer argument refuses with a plain Error (not its CLIError, as its flag does),
  // which reads as an internal error: refused here as bad input, one line and exit 2.
  async parse(input: string, _: unknown, opts: {min?: number; max?: number}) {
    const value = integerValue(input, opts)
    if (typeof value === 'string') throw new TomaError(value)
    return value
  },
}) as unknown as typeof OclifArgs.integer
