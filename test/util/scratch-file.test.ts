import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {ScratchFile} from '../../src/util/scratch-file.js'
import {ParkedArray} from '../../src/util/parked-array.js'
import {readFileArray} from '../../src/util/file-array.js'
import {TomaError} from '../../src/errors.js'
import {testTemp} from '../helpers/test-temp.js'

// The dominator pass's arrays under a tight memory limit (dominators.ts: scratchBeside).
describe('ScratchFile', () => {
  it('lays arrays out one after the other beside the index, reads them back, and is gone once removed', () => {
    const dir = testTemp('scratch-file-')
    const scratch = new ScratchFile(`${dir}/core.toma-index`)
    const lists = scratch.reserve(6)
    const vertex = scratch.write(Uint32Array.of(7, 8, 9))
    scratch.writeAt(lists, 3, Uint32Array.of(4, 5, 6))
    scratch.writeAt(lists, 0, Uint32Array.of(1, 2, 3))
    expect(() => scratch.writeAt(lists, 4, Uint32Array.of(1, 2, 3))).toThrow(RangeError)
    expect(Array.from(readFileArray(lists, new Uint32Array(6)))).toEqual([1, 2, 3, 4, 5, 6])
    expect(Array.from(readFileArray(vertex, new Uint32Array(4)))).toEqual([7, 8, 9])
    expect(fs.readdirSync(dir)).toEqual([expect.stringMatching(/^\.core\.toma-index\.scratch\.toma-tmp-\d+-[0-9a-f]{16}$/)])
    scratch.remove()
    scratch.remove()
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it('a write that fails is one error naming the file, the user\'s to act on', () => {
    const dir = testTemp('scratch-file-')
    const scratch = new ScratchFile(`${dir}/core.toma-index`)
    const lists = scratch.reserve(3)
    // Its descriptor closed under it: the write fails as a full disk would.
    scratch.remove()
    let error: unknown
    try {
      scratch.writeAt(lists, 0, Uint32Array.of(1, 2, 3))
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(TomaError)
    expect((error as Error).message).toMatch(/core\.toma-index\.scratch: cannot write: /)
  })
})

// The vtable tier's type ids through the graph phases under a tight limit (analyze-core.ts: parkedTypes).
describe('ParkedArray', () => {
  it.each([
    ['Uint16Array of an odd length', Uint16Array.from({length: 7}, (_, i) => 65535 - 9 * i)],
    ['Uint8Array', Uint8Array.of(1, 2, 3, 255, 0)],
    ['Uint32Array', Uint32Array.of(0xffffffff, 0, 12345678)],
  ])('a %s comes back with its type, length and values, and its file goes', (_, array) => {
    const dir = testTemp('parked-array-')
    const parked = new ParkedArray(array, `${dir}/core.toma-index`)
    expect(fs.readdirSync(dir)).toHaveLength(1)
    const back = parked.take()
    expect(back.constructor).toBe(array.constructor)
    expect(Array.from(back)).toEqual(Array.from(array))
    expect(back.buffer).not.toBe(array.buffer)
    expect(fs.readdirSync(dir)).toEqual([])
    parked.remove()
  })

  it('removed without being taken (an analysis that failed): its file goes', () => {
    const dir = testTemp('parked-array-')
    const parked = new ParkedArray(new Uint16Array(1000).fill(3), `${dir}/core.toma-index`)
    parked.remove()
    parked.remove()
    expect(fs.readdirSync(dir)).toEqual([])
  })
})
