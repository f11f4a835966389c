import type * as OclifArgs from '@oclif/core/args'

/**
 * The argument kinds toma's commands use (string, integer), built exactly as `@oclif/core/args`
 * builds them (same fields, same parse and messages), for the reason src/cli/flags.ts gives:
 * oclif's module and the helpers it loads cost a few ms of every call's start-up.
 */
type Options = Record<string, unknown>

function custom(defaults: Options) {
  return (options: Options = {}) => ({
    parse: async (input: string) => input,
    ...defaults,
    ...options,
    input: [],
    type: 'option',
  })
}

export const string = custom({}) as unknown as typeof OclifArgs.string

export const integer = custom({
  async parse(input: string, _: unknown, opts: {min?: number; max?: number}) {
    if (!/^-?\d+$/.test(input)) throw new Error(`Expected an integer but received: ${input}`)
    const num = Number.parseInt(input, 10)
    if (opts.min !== undefined && num < opts.min) throw new Error(`Expected an integer greater than or equal to ${opts.min} but received: ${input}`)
    if (opts.max !== undefined && num > opts.max) throw new Error(`Expected an integer less than or equal to ${opts.max} but received: ${input}`)
    return num
  },
}) as unknown as typeof OclifArgs.integer
