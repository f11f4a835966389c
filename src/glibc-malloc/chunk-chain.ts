import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {IS_MMAPPED, MALLOC_ALIGNMENT, MIN_CHUNK, NON_MAIN_ARENA, PREV_INUSE} from './layout.js'

/** The main arena's chunks from its first to the top chunk, in address order. */
export interface ChunkChain {
  starts: number[]
  sizes: number[]
  /** Whether the chunk is in use as glibc marks it (the next chunk's PREV_INUSE bit): chunks in a tcache or fastbin look in use too. */
  inUse: boolean[]
  /** Chunk start → its position. */
  at: Map<number, number>
}

/**
 * Walks the chunks from `first` by their size fields to `top`. Every size must be a multiple of 16
 * of at least 32 with neither the mmapped nor the thread-arena bit, the first chunk must have
 * PREV_INUSE (glibc sets it on an arena's first chunk), and the chain must land on `top` exactly:
 * anything else is a reason, not a chain. Bounded by the chunks the range can hold.
 */
export function walkChunkChain(memory: AddressSpace, first: number, top: number): ChunkChain | {failure: string} {
  const starts: number[] = []
  const sizes: number[] = []
  const prevInUse: boolean[] = []
  const bound = (top - first) / MIN_CHUNK
  let p = first
  while (p < top) {
    if (starts.length > bound) return {failure: `more chunks than ${hex(first)}-${hex(top)} can hold`}
    const head = memory.readU64(p + 8)
    if (head === undefined) return {failure: `the chunk at ${hex(p)} is not in the core`}
    const flags = head % 8
    const size = head - flags
    if (size === MALLOC_ALIGNMENT) return {failure: `a fencepost chunk at ${hex(p)}: the heap is in pieces (something else moved the break between them), and where the next piece starts is not recorded`}
    if (size < MIN_CHUNK || size % MALLOC_ALIGNMENT !== 0) return {failure: `the chunk at ${hex(p)} has the size ${hex(size)}, no chunk's`}
    if (flags >= IS_MMAPPED) return {failure: `the chunk at ${hex(p)} is marked ${flags & IS_MMAPPED ? 'mmapped' : 'of a thread\'s arena'}, in the main arena`}
    if (p === first && !(flags & PREV_INUSE)) return {failure: `the first chunk at ${hex(p)} lacks PREV_INUSE`}
    if (p + size > top) return {failure: `the chunk at ${hex(p)} (${hex(size)} bytes) runs past the top chunk at ${hex(top)}`}
    starts.push(p)
    sizes.push(size)
    prevInUse.push(flags % 2 === PREV_INUSE)
    p += size
  }
  const topHead = memory.readU64(top + 8)
  if (topHead === undefined) return {failure: `the top chunk at ${hex(top)} is not in the core`}
  prevInUse.push(topHead % 2 === PREV_INUSE)
  const inUse = starts.map((_, k) => prevInUse[k + 1]!)
  // Two free chunks never touch: glibc merges them (a chunk before top is merged into it when freed).
  for (let k = 0; k < starts.length; k++) {
    if (!inUse[k] && (k + 1 === starts.length || !inUse[k + 1])) return {failure: `the free chunk at ${hex(starts[k]!)} is followed by ${k + 1 === starts.length ? 'the top chunk' : 'another free chunk'}: glibc would have merged them`}
  }
  return {starts, sizes, inUse, at: new Map(starts.map((s, k) => [s, k]))}
}
