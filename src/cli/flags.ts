import type * as OclifFlags from '@oclif/core/flags'

/**
 * The flag kinds toma's commands use (boolean, string, integer), built exactly as
 * `@oclif/core/flags` builds them (same fields, same parse and messages), so that help, the
 * manifest and oclif's parser see the same definitions. Not imported from oclif because that
 * module loads most of oclif's error and terminal code: a large part of every call's start-up
 * (docs/ARCHITECTURE.md, "Start-up design"). oclif's error class is loaded only when a value is refused.
 */

async function refuse(message: string): Promise<never> {
  const {CLIError} = await import('@oclif/core/errors')
  throw new CLIError(message)
}

type Options = Record<string, unknown>

export const boolean = ((options: Options = {}) => ({
  parse: async (b: boolean) => b,
  ...options,
  allowNo: Boolean(options.allowNo),
  type: 'boolean',
})) as unknown as typeof OclifFlags.boolean

/** A flag or argument that takes a value, as oclif's `custom` builders make it (flags add `multiple`). */
export function valueDefinition(defaults: Options, options: Options): Options {
  return {parse: async (input: string) => input, ...defaults, ...options, input: []}
}

function custom(defaults: Options) {
  return (options: Options = {}) => ({
    ...valueDefinition(defaults, options),
    multiple: Boolean(options.multiple === undefined ? (defaults.multiple ?? false) : options.multiple),
    type: 'option',
  })
}

/** oclif's integer check (flags and arguments alike): the number, or the message refusing the input. */
export function integerValue(input: string, opts: {min?: number; max?: number}): number | string {
  if (!/^-?\d+$/.test(input)) return `Expected an integer but received: ${input}`
  const num = Number.parseInt(input, 10)
  if (opts.min !== undefined && num < opts.min) return `Expected an integer greater than or equal to ${opts.min} but received: ${input}`
  if (opts.max !== undefined && num > opts.max) return `Expected an integer less than or equal to ${opts.max} but received: ${input}`
  return num
}

export const string = custom({}) as unknown as typeof OclifFlags.string

export const integer = custom({
  async parse(input: string, _: unknown, opts: {min?: number; max?: number}) {
    const value = integerValue(input, opts)
    return typeof value === 'string' ? refuse(value) : value
  },
}) as unknown as typeof OclifFlags.integer

/** The `--json` flag oclif adds to a command with `enableJsonFlag` (its util/aggregate-flags). */
export const jsonFlag = boolean({description: 'Format output as json.', helpGroup: 'GLOBAL'})
