import {forwardReaders, type ForwardEdges} from './forward-edges.js'
import type {Uint32Blocks} from '../util/block-cache.js'
import type {FileArray} from '../util/file-array.js'

/** The block caches' size where the edges are in a file. */
type BlockCacheSize = Pick<ForwardEdges, 'cacheBytes' | 'blockWords'>

/** parent value of an object a root points to directly. */
export const FROM_ROOT = 0xffff_fffe
/** parent value of an object no root reaches (or a free slot). */
export const UNREACHED = 0xffff_ffff

/**
 * Which objects the program can still reach, and how: breadth-first from every root over the
 * forward edges, keeping for each reached object the object it was first reached from. Following
 * parents from any object gives a shortest chain of pointers from a root to it, so a path query
 * costs only the path's length. A live object no root reaches is leaked (nothing in the process
 * can free it). Works on the CSR arrays alone, so it runs at analysis time and from an index alike.
 *
 * The search goes a level (a distance from the roots) at a time. A level is a list of objects in
 * the order they were reached, as a queue would hold them, while it is short; one larger than
 * `listMax` objects is a bitmap instead, walked in object order. A queue of every reached object
 * would take 4 bytes an object slot beside the dominator pass's DFS (one array of pointers in the
 * heap makes nearly every object one level); two lists of objectCount / 64 objects and two bitmaps
 * take 3/8 of a byte. A level in a bitmap is walked in objectCount / 32 word reads, and there are
 * at most (reached objects / listMax) such levels. The parents are a shortest-path tree whichever way
 * each level is held, and always the same one for the same graph.
 *
 * `memory`: where the parents go (4 bytes an object, any content; the parents are shared if it
 * is), instead of new memory. Either edge array may be in the index, read through a block cache
 * (`cache`: its size, forward-edges.ts).
 */
export function shortestPathParents(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array | FileArray, rootTo: Uint32Array, memory?: ArrayBufferLike, listMax = levelListMax(objectCount), cache?: BlockCacheSize): Uint32Array {
  const edges = forwardReaders({outStart, outTo, ...cache})
  try {
    return pathParents(objectCount, edges.starts, edges.targets, rootTo, memory, listMax)
  } finally {
    edges.close()
  }
}

function pathParents(objectCount: number, starts: Uint32Blocks, targets: Uint32Blocks, rootTo: Uint32Array, memory: ArrayBufferLike | undefined, listMax: number): Uint32Array {
  if (objectCount >= FROM_ROOT) throw new RangeError(`${objectCount} objects: too many for 32-bit object ids`)
  const usable = memory && memory.byteLength >= 4 * objectCount ? memory : undefined
  const parent = (usable ? new Uint32Array(usable, 0, objectCount) : new Uint32Array(objectCount)).fill(UNREACHED)
  // "Reached yet?" is asked of a bitmap, one bit an object, instead of parent[]: the question
  // comes once an edge at a random object, and the bitmap stays in the cache where parent[]
  // (32 times larger) costs a memory read each time; parent[] is written once an object.
  const words = (objectCount + 31) >>> 5
  const reached = new Int32Array(words)
  const max = Math.max(1, Math.floor(listMax))
  // The level being walked and the next one, each a list (length) or a bitmap (bits, non-null).
  let list = new Uint32Array(Math.min(max, objectCount))
  let length = 0
  let bits: Int32Array | null = null
  let nextList = new Uint32Array(list.length)
  let nextLength = 0
  let nextBits: Int32Array | null = null
  let spareBits: Int32Array | null = null
  let nextCount = 0
  /** Reached from `from`: its parent, and a place in the next level. */
  const reach = (o: number, from: number): void => {
    reached[o >>> 5]! |= 1 << (o & 31)
    parent[o] = from
    nextCount++
    if (nextBits !== null) nextBits[o >>> 5]! |= 1 << (o & 31)
    else if (nextLength < max) nextList[nextLength++] = o
    else {
      // The level outgrows its list: a bitmap from here on.
      nextBits = spareBits ?? new Int32Array(words)
      spareBits = null
      for (let i = 0; i < nextLength; i++) nextBits[nextList[i]! >>> 5]! |= 1 << (nextList[i]! & 31)
      nextBits[o >>> 5]! |= 1 << (o & 31)
      nextLength = 0
    }
  }
  const follow = (o: number): void => {
    for (let e = starts.at(o), end = starts.at(o + 1); e < end; e++) {
      const to = targets.at(e)
      if ((reached[to >>> 5]! & (1 << (to & 31))) === 0) reach(to, o)
    }
  }
  for (let r = 0; r < rootTo.length; r++) {
    const o = rootTo[r]!
    if ((reached[o >>> 5]! & (1 << (o & 31))) === 0) reach(o, FROM_ROOT)
  }
  while (nextCount > 0) {
    const walked = list
    list = nextList
    nextList = walked
    length = nextLength
    bits = nextBits as Int32Array | null // set by reach()
    nextLength = 0
    nextBits = null
    nextCount = 0
    if (bits === null) {
      for (let i = 0; i < length; i++) follow(list[i]!)
      continue
    }
    // Cleared as it is walked, for a later level to reuse.
    for (let w = 0; w < words; w++) {
      let b = bits[w]!
      if (b === 0) continue
      bits[w] = 0
      while (b !== 0) {
        const low = b & -b
        follow(w * 32 + 31 - Math.clz32(low))
        b ^= low
      }
    }
    spareBits = bits
  }
  return parent
}

/** Objects a level of the search lists before it goes to a bitmap. */
function levelListMax(objectCount: number): number {
  return Math.max(4096, objectCount >>> 6)
}

/** One byte per object: 1 where a root reaches it. */
export function reachableFromParents(parent: Uint32Array): Uint8Array {
  const reached = new Uint8Array(parent.length)
  for (let o = 0; o < parent.length; o++) if (parent[o] !== UNREACHED) reached[o] = 1
  return reached
}

export function reachableFromRoots(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array | FileArray, rootTo: Uint32Array, memory?: ArrayBufferLike, cache?: BlockCacheSize): Uint8Array {
  return reachableFromParents(shortestPathParents(objectCount, outStart, outTo, rootTo, memory, undefined, cache))
}
