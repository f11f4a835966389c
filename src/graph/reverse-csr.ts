import {Uint32Reader, type FileArray} from '../util/file-array.js'

/**
 * The reverse CSR is a stable sort of the edges by target, which threads share (reverse-job.ts)
 * by targets: the targets are cut into blocks of 2^blockShift consecutive ids, each block's
 * in-lists built by one thread. In-lists are ordered by edge index, hence by source object, and
 * follow one another in target order, so the arrays are the same however the blocks are dealt.
 *
 * A counting sort straight into place costs a random read-modify-write of the target's cursor and
 * two random writes an edge, over arrays far larger than the caches: that was the pass's whole
 * cost. So it goes in two steps, each with its writes in cache: the edges are first distributed
 * to their block's range of the output, in edge order (a cursor a block, one write stream a block
 * and array); then each block's range, a few hundred KiB, is sorted by each edge's target's place
 * in the block (counting sort, stable) into its final order. The places are read again from the
 * edges' targets, block by block, rather than kept from the distribution: that would be 2 bytes an
 * edge beside the reverse graph, at the pass's peak memory; the block's edges are ascending, so
 * the reads go forward through the targets. A block holding more than `maxBlockEdges` edges (a
 * hugely referenced target) would need that much scratch memory: its edges go straight into
 * place, after counting its targets' in-degrees.
 *
 * After the fill inStart[t] is where t's list ends, shifted into place by finishReverse, so no
 * second objectCount-long array is needed.
 */

/**
 * Targets per block, 2^16: a target's place in its block fits the 16 bits kept for it, and the
 * distribution's write streams (three a block) stay few enough for the cache.
 */
export const REVERSE_BLOCK_SHIFT = 16

/** Most edges a block may hold for its sort (8 bytes of scratch an edge, per thread); a block with more is filled in place. */
export const MAX_BLOCK_EDGES = 1 << 22

/** The blocks of targets one thread builds the in-lists of. */
export interface ReverseShare {
  /** The thread of each block of 2^blockShift consecutive targets. */
  blockThread: Uint8Array
  thread: number
  /** At most 16. */
  blockShift: number
}

/**
 * The arrays the fill writes: the reverse CSR, or a window of it (a pass of reverse-passes.ts):
 * inStart's element k is target targetBase + k's, inEdge's and inFrom's element i is edge place
 * edgeBase + i. The places written (inStart's values) are the whole CSR's either way.
 */
export interface ReverseArrays {
  inStart: Uint32Array
  inEdge: Uint32Array
  inFrom: Uint32Array
  /** Default 0. */
  targetBase?: number
  edgeBase?: number
}

/** Blocks of targets among objectCount objects. */
export function reverseBlockCount(objectCount: number, blockShift = REVERSE_BLOCK_SHIFT): number {
  return Math.ceil(objectCount / 2 ** blockShift)
}

/**
 * Fills the in-lists of the share's blocks, a block's lists after the incoming edges of all the
 * blocks before it (which every thread counts for itself: one sequential read of the targets,
 * cheaper than waiting for each other), walking the edges in order (object by object: the source
 * of each edge comes free).
 */
export function fillReverseShare(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array, share: ReverseShare, into: ReverseArrays, maxBlockEdges = MAX_BLOCK_EDGES, startsChunk?: number): void {
  // The sources' edge ranges are read in order (from the index, where it is: outStart's memory
  // is then free for the reverse graph), `startsChunk` entries a read (tests make it small).
  const starts = new Uint32Reader(outStart, startsChunk)
  try {
    starts.load(objectCount, objectCount + 1)
    const edgeCount = starts.words[objectCount - starts.start]!
    fillShare(objectCount, edgeCount, starts, outTo, share, into, maxBlockEdges)
  } finally {
    starts.close()
  }
}

function fillShare(objectCount: number, edgeCount: number, starts: Uint32Reader, outTo: Uint32Array, share: ReverseShare, into: ReverseArrays, maxBlockEdges: number): void {
  const {inStart, inEdge, inFrom} = into
  const targetBase = into.targetBase ?? 0
  const edgeBase = into.edgeBase ?? 0
  const {blockThread, thread, blockShift} = share
  if (!(blockShift >= 0 && blockShift <= 16)) throw new RangeError(`reverse block shift ${blockShift}: a place in a block must fit 16 bits`)
  const blocks = blockThread.length
  const blockSize = 2 ** blockShift
  const mask = blockSize - 1
  const blockTotals = new Float64Array(blocks)
  for (let e = 0; e < edgeCount; e++) blockTotals[outTo[e]! >>> blockShift]!++
  // Per own block: where its range starts (the cursor of the distribution), whether it is sorted
  // (1) or filled in place (2); 0 for the other threads' blocks.
  const cursor = new Uint32Array(blocks)
  const mode = new Uint8Array(blocks)
  let inPlace = false
  let largest = 0
  for (let b = 0, base = 0; b < blocks; base += blockTotals[b]!, b++) {
    if (blockThread[b] !== thread) continue
    cursor[b] = base
    const sorted = blockTotals[b]! <= maxBlockEdges
    mode[b] = sorted ? 1 : 2
    if (sorted) largest = Math.max(largest, blockTotals[b]!)
    else inPlace = true
  }
  if (inPlace) {
    // In-degrees of the in-place blocks' targets, then their list starts: t's cursor.
    for (let e = 0; e < edgeCount; e++) {
      const t = outTo[e]!
      if (mode[t >>> blockShift] === 2) inStart[t - targetBase]!++
    }
    for (let b = 0; b < blocks; b++) {
      if (mode[b] !== 2) continue
      for (let t = b * blockSize, end = Math.min(objectCount, t + blockSize), at = cursor[b]!; t < end; t++) {
        const count = inStart[t - targetBase]!
        inStart[t - targetBase] = at
        at += count
      }
    }
  }
  // The distribution: each edge of an own block to its block's range, or straight into place.
  starts.load(0, objectCount + 1)
  let words = starts.words
  let base = starts.start
  let e = words[0 - base]!
  for (let o = 0; o < objectCount; o++) {
    if (o + 1 >= starts.end) {
      starts.load(o + 1, objectCount + 1)
      words = starts.words
      base = starts.start
    }
    for (const end = words[o + 1 - base]!; e < end; e++) {
      const t = outTo[e]!
      const b = t >>> blockShift
      const m = mode[b]!
      if (m === 0) continue
      const at = (m === 1 ? cursor[b]!++ : inStart[t - targetBase]!++) - edgeBase
      inEdge[at] = e
      inFrom[at] = o
    }
  }
  // Each sorted block's range, by target: counted, copied out, written back in order.
  const count = new Uint32Array(blockSize)
  const edges = new Uint32Array(largest)
  const from = new Uint32Array(largest)
  const place = new Uint16Array(largest)
  for (let b = 0, base = 0; b < blocks; base += blockTotals[b]!, b++) {
    if (mode[b] !== 1) continue
    const n = blockTotals[b]!
    count.fill(0)
    const local = base - edgeBase
    for (let i = 0; i < n; i++) {
      const p = outTo[inEdge[local + i]!]! & mask
      place[i] = p
      count[p]!++
    }
    const first = b * blockSize
    const targets = Math.min(blockSize, objectCount - first)
    for (let k = 0, at = base; k < targets; k++) {
      const c = count[k]!
      count[k] = at
      at += c
      inStart[first + k - targetBase] = at
    }
    edges.set(inEdge.subarray(local, local + n))
    from.set(inFrom.subarray(local, local + n))
    for (let i = 0; i < n; i++) {
      const at = count[place[i]!]!++ - edgeBase
      inEdge[at] = edges[i]!
      inFrom[at] = from[i]!
    }
  }
}

/** After every block is filled inStart[t] is where t's list ends, i.e. where t + 1's starts. */
export function finishReverse(inStart: Uint32Array, objectCount: number): void {
  inStart.copyWithin(1, 0, objectCount)
  inStart[0] = 0
}
