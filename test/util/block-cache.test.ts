import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {Uint32Blocks} from '../../src/util/block-cache.js'
import type {FileArray} from '../../src/util/file-array.js'
import {testTemp} from '../helpers/test-temp.js'

// The forward edges under a tight memory limit: random reads of an array in the index through a
// cache of a few blocks (graph/forward-edges.ts).
describe('Uint32Blocks', () => {
  const values = Uint32Array.from({length: 1000}, (_, i) => (i * 2654435761) >>> 0)
  const inFile = (name: string, bytes: Buffer = Buffer.from(values.buffer)): FileArray => {
    const path = `${testTemp('block-cache-')}/${name}`
    // As in the index: other bytes before the array.
    fs.writeFileSync(path, Buffer.concat([Buffer.alloc(20, 0xee), bytes]))
    return {path, byteOffset: 20, length: values.length, written: Int32Array.of(1)}
  }

  it('reads any element, each block once while it stays cached, the least recently used one again after it went', () => {
    // Blocks of 16 elements, 3 of them cached (the last block holds 8).
    const blocks = new Uint32Blocks(inFile('random'), 3 * 16 * 4, 16)
    let seed = 7
    for (let k = 0; k < 5000; k++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      const i = seed % values.length
      expect(blocks.at(i)).toBe(values[i])
    }
    expect(blocks.at(999)).toBe(values[999])
    const reads = blocks.reads
    // Three blocks read once each, then read again in any order: no read.
    for (const i of [0, 16, 32]) blocks.at(i)
    const three = blocks.reads
    for (const i of [5, 40, 17, 33, 1, 47]) expect(blocks.at(i)).toBe(values[i])
    expect(three - reads).toBeLessThanOrEqual(3)
    expect(blocks.reads).toBe(three)
    // A fourth block goes where the one read least lately was.
    blocks.at(100)
    expect(blocks.reads).toBe(three + 1)
    blocks.close()
  })

  it('in memory: the array itself, no cache; past the end or a file cut short: an error, not a value', () => {
    const inMemory = new Uint32Blocks(values, 0)
    expect(inMemory.at(999)).toBe(values[999])
    expect(inMemory.reads).toBe(0)
    const cut = new Uint32Blocks(inFile('cut', Buffer.from(values.buffer, 0, 400)), 4096, 16)
    // 100 elements in the file: blocks 0 to 5 are whole, block 6 (96 to 111) is not.
    expect(cut.at(95)).toBe(values[95])
    expect(() => cut.at(96)).toThrow(/ends before its array/)
    expect(() => cut.at(1000)).toThrow(RangeError)
    cut.close()
  })
})
