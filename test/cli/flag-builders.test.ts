import * as OclifArgs from '@oclif/core/args'
import * as OclifFlags from '@oclif/core/flags'
import {describe, expect, it} from 'vitest'
import * as Args from '../../src/cli/args.js'
import * as Flags from '../../src/cli/flags.js'

// src/cli/flags.ts and args.ts build flags and arguments as oclif's builders do, without loading
// oclif (docs/ARCHITECTURE.md, "Start-up design"): help, the manifest and oclif's parser must see the same thing, and
// an oclif upgrade that changes its builders must show here.
const shape = (definition: object) => JSON.stringify(definition, (_, v) => (typeof v === 'function' ? 'function' : v))
const outcome = async (parse: () => Promise<unknown>) => {
  try {
    return {value: await parse()}
  } catch (e) {
    const err = e as Error & {oclif?: unknown}
    return {error: err.message, kind: err.constructor.name, oclif: err.oclif}
  }
}

describe('flag and argument builders', () => {
  it('make the definitions oclif makes, field for field', () => {
    const flags: Array<['boolean' | 'string' | 'integer', Record<string, unknown>]> = [
      ['boolean', {description: 'a switch', exclusive: ['other']}],
      ['string', {description: 'a choice', options: ['a', 'b'], default: 'a', char: 'o'}],
      ['string', {description: 'repeatable', multiple: true}],
      ['integer', {description: 'a count', default: 2, min: 1, max: 5}],
    ]
    for (const [kind, options] of flags) expect(shape((Flags[kind] as (o: object) => object)(options))).toBe(shape((OclifFlags[kind] as (o: object) => object)(options)))
    for (const kind of ['string', 'integer'] as const) {
      const options = {description: 'an argument', required: true, ignoreStdin: true}
      expect(shape((Args[kind] as (o: object) => object)(options))).toBe(shape((OclifArgs[kind] as (o: object) => object)(options)))
    }
    expect(shape(Flags.jsonFlag)).toBe(shape(OclifFlags.boolean({description: 'Format output as json.', helpGroup: 'GLOBAL'})))
  })

  it('accept and refuse integers as oclif does, with its messages (and its error kinds, but for arguments: bad input)', async () => {
    const opts = {min: 1, max: 50}
    for (const input of ['7', '0', '51', '-3', 'x', '1e3', '']) {
      const ours = Flags.integer(opts) as unknown as {parse: (i: string, c: unknown, o: object) => Promise<unknown>}
      const theirs = OclifFlags.integer(opts) as unknown as {parse: (i: string, c: unknown, o: object) => Promise<unknown>}
      expect(await outcome(() => ours.parse(input, {}, opts))).toEqual(await outcome(() => theirs.parse(input, {}, opts)))
      const ourArg = Args.integer(opts) as unknown as {parse: (i: string, c: unknown, o: object) => Promise<unknown>}
      const theirArg = OclifArgs.integer(opts) as unknown as {parse: (i: string, c: unknown, o: object) => Promise<unknown>}
      // The one deliberate difference: oclif's argument refuses with a plain Error, which reads as
      // an internal error; ours refuses as bad input (TomaError: one line, exit 2), same message.
      const theirOutcome = await outcome(() => theirArg.parse(input, {}, opts))
      expect(await outcome(() => ourArg.parse(input, {}, opts))).toEqual('error' in theirOutcome ? {...theirOutcome, kind: 'TomaError'} : theirOutcome)
    }
  })
})
