import type {AddressSpace} from '../core/address-space.js'
import {CHUNK, scanBuffer} from '../core/read-chunk.js'
import type {ModelledHeap} from './heap-model.js'
import {LIVE} from './states.js'
import {sharedFloat64} from '../util/shared-arrays.js'

const TWO32 = 0x1_0000_0000

/** Objects of at least this size have their first word read alone: the rest of their bytes is not wanted. */
const ALONE = 4096

/** Whose first words are read: the slots whose state is LIVE (before the model's walks, every slot of an in-use span). */
type Slots = Pick<ModelledHeap, 'spans' | 'state' | 'pageSize'>

/**
 * The first 8 bytes of every live object (vtable pointers name types), NaN where the object is
 * not live: those the model read for its list walks where it did (a free object's first word is
 * its link: one pass in large reads instead of a walk through the heap's blocks), else read now.
 * Handed over, not copied: the model keeps no reference to them afterwards.
 */
export function liveFirstWords(memory: AddressSpace, heap: ModelledHeap, progress?: (done: number, total: number) => void): Float64Array {
  const read = heap.slotWords?.take()
  if (!read) return firstWordsOf(memory, heap, progress)
  const state = heap.state
  for (let i = 0; i < read.length; i++) if (state[i] !== LIVE) read[i] = NaN
  return read
}

/**
 * The first 8 bytes of every slot whose state is LIVE, NaN where the slot is not, is smaller than
 * 8 bytes or is not in the core: what the pointer scan records (object-scan.ts),
 * without the scan, so that types are known before the graph. Spans of small objects are read a
 * run of neighbours at a time, larger objects a word each.
 */
export function firstWordsOf(memory: AddressSpace, heap: Slots, progress?: (done: number, total: number) => void): Float64Array {
  const {start, pages, firstObject, objectCount, objectSize, count: spanCount} = heap.spans
  const pageSize = heap.pageSize
  const state = heap.state
  const words = sharedFloat64(heap.spans.totalObjects).fill(NaN)
  const buf = scanBuffer()
  const u32 = new Uint32Array(buf.buffer, buf.byteOffset, CHUNK >>> 2)

  /** Each live object of span s read 8 bytes at a time (large objects, or bytes the core lacks). */
  const alone = (s: number) => {
    const size = objectSize[s]!
    if (size < 8) return
    for (let k = 0, first = firstObject[s]!, n = objectCount[s]!; k < n; k++) {
      if (state[first + k] !== LIVE) continue
      if (memory.readInto(start[s]! + k * size, 8, buf)) words[first + k] = u32[1]! * TWO32 + u32[0]!
    }
  }
  /** Spans [from, to), which lie page after page within CHUNK bytes, read at once. */
  const run = (from: number, to: number) => {
    const base = start[from]!
    const end = start[to - 1]! + objectCount[to - 1]! * objectSize[to - 1]!
    if (!memory.readInto(base, end - base, buf)) {
      for (let s = from; s < to; s++) alone(s)
      return
    }
    for (let s = from; s < to; s++) {
      const size = objectSize[s]!
      if (size < 8) continue
      // Objects whose size is no multiple of 4 do not start at a 32-bit element of the buffer.
      if (size % 4 !== 0) {
        alone(s)
        continue
      }
      // Spans start on pages: each object's first element is a whole index, one step after the last.
      const step = size / 4
      for (let i = firstObject[s]!, end = i + objectCount[s]!, w = (start[s]! - base) / 4; i < end; i++, w += step) {
        if (state[i] === LIVE) words[i] = u32[w + 1]! * TWO32 + u32[w]!
      }
    }
  }

  for (let s = 0; s < spanCount; ) {
    if ((s & 0xfff) === 0) progress?.(s, spanCount)
    if (objectSize[s]! >= ALONE || !hasLive(s)) {
      if (objectSize[s]! >= ALONE) alone(s)
      s++
      continue
    }
    // Neighbours of small objects whose pages follow each other, up to CHUNK bytes.
    let to = s + 1
    const base = start[s]!
    while (to < spanCount && objectSize[to]! < ALONE && start[to] === start[to - 1]! + pages[to - 1]! * pageSize && start[to]! + objectCount[to]! * objectSize[to]! - base <= CHUNK && hasLive(to)) to++
    if (start[s]! + objectCount[s]! * objectSize[s]! - base > CHUNK) alone(s)
    else run(s, to)
    s = to
  }
  return words

  function hasLive(s: number): boolean {
    for (let i = firstObject[s]!, end = i + objectCount[s]!; i < end; i++) if (state[i] === LIVE) return true
    return false
  }
}
