import {buildReverse, type ReversePass} from './reverse-job.js'
import {MAX_BLOCK_EDGES, REVERSE_BLOCK_SHIFT, reverseBlockCount} from './reverse-csr.js'
import type {FileArray, ReservedArray} from '../util/file-array.js'
import {inFrameOfItsOwn} from '../store/frame.js'

/** Where the reverse CSR's arrays go: their places in the index being written. */
export interface ReverseTargets {
  inFrom: ReservedArray
  inStart: ReservedArray
  inEdge: ReservedArray
}

/** Bytes the one-pass build holds at once: the whole reverse CSR (4 bytes a target, 8 an edge). */
export function reverseBytes(objectCount: number, edgeCount: number): number {
  return 4 * (objectCount + 1) + 8 * edgeCount
}

/**
 * Passes at most: each one walks all the edges, so a pass takes a sixteenth of them at least, even
 * where the room left is smaller (the limit is then passed, which the caller reports).
 */
export const MAX_PASSES = 16

/** What a pass's thread needs beside its window: its read of the sources' edge ranges and its sort's scratch. */
const READ_CHUNK_BYTES = 4 << 20
const SCRATCH_BYTES_PER_EDGE = 10

/**
 * The reverse CSR when it does not fit beside what the analysis holds (analyze --memory-limit):
 * built in passes over consecutive blocks of targets, each pass as large as `room()` (bytes the
 * process may still allocate) allows, its in-lists written straight to their places in the index
 * and let go (`collect`) before the next pass. Every pass walks all the edges again (sequential
 * reads, about a third of a second for 54 M edges), and writes only its blocks' lists: MAX_PASSES
 * bounds what that costs.
 *
 * The index is the same byte for byte: the one fill (reverse-csr.ts) builds each block's lists
 * whatever else is built with them, and the arrays lie where the one-pass build writes them
 * (IndexWriter.reserve). Where the room is smaller than a pass of MAX_PASSES, or than a block,
 * the limit is passed, which the caller reports.
 */
export function reverseInPasses(
  objectCount: number,
  outStart: Uint32Array | FileArray,
  outTo: Uint32Array,
  edgeCount: number,
  threads: number,
  into: ReverseTargets,
  room: () => number,
  collect: () => void,
  blockShift = REVERSE_BLOCK_SHIFT,
): {passes: number; threads: number} {
  const blocks = reverseBlockCount(objectCount, blockShift)
  const blockSize = 2 ** blockShift
  const edgesOfBlock = new Float64Array(blocks)
  for (let e = 0; e < edgeCount; e++) edgesOfBlock[outTo[e]! >>> blockShift]!++
  into.inStart.writeAt(0, Uint32Array.of(0))
  let passes = 0
  let used = 1
  for (let first = 0, edgeBase = 0; first < blocks; ) {
    const budget = room()
    // Whole blocks while the pass's window and its threads' scratch fit, or up to a sixteenth of the edges.
    let end = first
    let edges = 0
    let largestBlock = 0
    do {
      const blockEdges = edgesOfBlock[end]!
      const largest = Math.max(largestBlock, blockEdges <= MAX_BLOCK_EDGES ? blockEdges : 0)
      const next = passBytes(edges + blockEdges, (end + 1 - first) * blockSize, largest, threads, blockSize)
      if (end > first && next > budget && edges >= edgeCount / MAX_PASSES) break
      edges += blockEdges
      largestBlock = largest
      end++
    } while (end < blocks)
    // In a frame of its own, so that nothing holds the pass's arrays at the collection.
    used = inFrameOfItsOwn(() => buildPass(objectCount, outStart, outTo, edgeCount, threads, {firstBlock: first, endBlock: end, edgeBase, edges}, into, blockShift))
    passes++
    edgeBase += edges
    first = end
    collect()
  }
  for (const a of [into.inFrom, into.inStart, into.inEdge]) a.done()
  return {passes, threads: used}
}

/** Builds a pass's in-lists and writes them to their places; returns the threads it ran on. */
function buildPass(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array, edgeCount: number, threads: number, pass: ReversePass, into: ReverseTargets, blockShift: number): number {
  const built = buildReverse(objectCount, outStart, outTo, edgeCount, threads, pass, blockShift)
  into.inFrom.writeAt(pass.edgeBase, built.inFrom)
  into.inEdge.writeAt(pass.edgeBase, built.inEdge)
  // The pass's inStart says where each target's list ends: the whole CSR's entry of the next target.
  into.inStart.writeAt(pass.firstBlock * 2 ** blockShift + 1, built.inStart)
  return built.threads
}

/** What a pass holds: its window of the CSR, and per thread a read chunk and the sort's scratch for its largest block. */
function passBytes(edges: number, targets: number, largestBlock: number, threads: number, blockSize: number): number {
  return 8 * edges + 4 * targets + threads * (READ_CHUNK_BYTES + 4 * blockSize + SCRATCH_BYTES_PER_EDGE * largestBlock)
}
