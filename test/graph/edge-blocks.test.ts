import {describe, expect, it} from 'vitest'
import {concatBlocks} from '../../src/graph/edge-blocks.js'

// The scan's edges are joined into one array block by block; under a memory limit the blocks
// copied are collected as the copy goes (graph-phases.ts), so that the copy does not hold the
// edges twice: concatBlocks says how much is left to copy every 64 blocks.
describe('concatBlocks', () => {
  it('joins the lists in order, empties them, and reports what is left every 64 blocks', () => {
    const lists = [Array.from({length: 100}, (_, b) => Uint32Array.of(4 * b, 4 * b + 1, 4 * b + 2, 4 * b + 3)), Array.from({length: 30}, (_, b) => Uint32Array.of(400 + b))]
    const total = 100 * 4 + 30
    const left: number[] = []
    const joined = concatBlocks(lists, total, false, bytesLeft => left.push(bytesLeft))
    expect(Array.from(joined)).toEqual(Array.from({length: total}, (_, i) => i))
    // After block 64 (256 elements copied) and block 128 (400 + 28).
    expect(left).toEqual([4 * (total - 256), 4 * (total - 428)])
    expect(lists.map(l => l.length)).toEqual([0, 0])
  })
})
