import {Chalk} from 'chalk'
import {describe, expect, it} from 'vitest'
import {printable, printableData, terminalSafe} from '../../src/util/printable.js'
import {HOSTILE_ARGS, HOSTILE_LIBRARY_PATH} from '../helpers/hostile-fixture.js'

// The two layers of src/util/printable.ts on the hostile fixture's own strings (the bytes
// test/helpers/hostile-fixture.ts writes into a real core), as toma decodes them.
const args = HOSTILE_ARGS.toString('latin1')
const chalk = new Chalk({level: 1})

describe('printable', () => {
  it('escapes every control character, LF, TAB, C1 and bidi included', () => {
    expect(printable(HOSTILE_LIBRARY_PATH)).toBe('/x\\x1b]0;T\\x07\\x1b[2J\\x0d\\x0aWarnings (0)\\x9b\\x7f\\u202eaaaaaaaaaaaaa')
    expect(printable(`a\tb`)).toBe('a\\x09b')
  })

  it('makes every string of a formatter\'s data printable, and copies nothing when none needs it', () => {
    const data = {core: 'core.1', threads: [{tid: 1, name: args}], n: 3, none: null}
    const shown = printableData(data)
    expect(shown.threads[0]!.name).toBe(printable(args))
    expect(data.threads[0]!.name).toBe(args)
    const plain = {core: 'core.1', threads: [{tid: 1, name: 'main'}]}
    expect(printableData(plain)).toBe(plain)
  })
})

describe('terminalSafe, the last guard', () => {
  it('keeps chalk\'s colour codes, LF and TAB, and writes every other control as a \\u escape', () => {
    const ours = `${chalk.bold('core')}\t${chalk.red('leaked')}\n${chalk.dim.underline('x')}`
    expect(terminalSafe(ours)).toBe(ours)
    expect(terminalSafe(`${chalk.green('ok')} ${args}`)).toBe(
      `${chalk.green('ok')} ./heapdemo \\u000d\\u001b[2K\nWarnings (0)\n\\u001b]8;;http://x\\u0007link\\u001b]8;;\\u0007`,
    )
    // SGR 8 (concealed) is no code of toma's: a core could hide the lines after it.
    expect(terminalSafe('\u001b[8mhidden')).toBe('\\u001b[8mhidden')
  })

  it('leaves JSON valid and equal: its \\u escapes are JSON\'s', () => {
    const json = JSON.stringify({path: HOSTILE_LIBRARY_PATH})
    expect(json).toMatch(/[\u007f\u009b\u202e]/)
    const guarded = terminalSafe(json)
    expect(guarded).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
    expect(JSON.parse(guarded)).toEqual({path: HOSTILE_LIBRARY_PATH})
  })
})
