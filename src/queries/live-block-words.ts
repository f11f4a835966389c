import type {AddressSpace} from '../core/address-space.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'

/** Bytes of live heap blocks read at once: runs of neighbouring blocks of a span, a large block in pieces. */
const READ = 4 << 20
const TWO_32 = 0x1_0000_0000

/**
 * Every aligned word of every live heap block whose value lies in [lo, hi), in address order, read
 * a few MiB at a time (the high half of a word is tested first: most words are far from the
 * range); `visit` returns true to stop. Blocks whose bytes the core lacks are skipped.
 */
export function liveBlockWordsIn(index: HeapIndex, memory: AddressSpace, lo: number, hi: number, visit: (value: number, address: number, id: number, blockStart: number, blockSize: number) => boolean): void {
  const {spanStart, spanObjectSize, spanObjectCount, spanFirstObject} = index
  const state = index.objects.state
  const loHigh = Math.floor(lo / TWO_32)
  const hiHigh = Math.floor((hi - 1) / TWO_32)
  const buffer = Buffer.alloc(READ)
  for (let s = 0; s < spanStart.length; s++) {
    const size = spanObjectSize[s]!
    const count = spanObjectCount[s]!
    const first = spanFirstObject[s]!
    // Neighbouring blocks a read when they are small; one block in pieces of READ when it is not.
    const perRead = Math.max(1, Math.floor(READ / size))
    for (let k = 0; k < count; k += perRead) {
      const n = Math.min(perRead, count - k)
      let live = false
      for (let j = 0; j < n && !live; j++) live = state[first + k + j] === LIVE
      if (!live) continue
      const base = spanStart[s]! + k * size
      for (let piece = 0; piece < n * size; piece += READ) {
        const length = Math.min(READ, n * size - piece)
        if (!memory.readInto(base + piece, length, buffer)) continue
        for (let at = 0; at + 8 <= length; at += 8) {
          const offset = piece + at
          const j = Math.floor(offset / size)
          if (state[first + k + j] !== LIVE) {
            at = (j + 1) * size - piece - 8
            continue
          }
          const high = buffer.readUInt32LE(at + 4)
          if (high < loHigh || high > hiHigh) continue
          const value = buffer.readUInt32LE(at) + high * TWO_32
          if (value < lo || value >= hi) continue
          const blockStart = base + j * size
          if (visit(value, base + offset, first + k + j, blockStart, size)) return
        }
      }
    }
  }
}
