import {fillReverseShare, finishReverse, REVERSE_BLOCK_SHIFT, reverseBlockCount} from './reverse-csr.js'
import {WorkerJob, type WorkerFailure} from '../util/worker-job.js'
import {sharedUint32, sharedUint8} from '../util/shared-arrays.js'
import type {FileArray} from '../util/file-array.js'

/** The reverse edges: incoming edges of object o are inEdge/inFrom[inStart[o] .. inStart[o+1]). */
export interface ReverseEdges {
  inStart: Uint32Array
  inEdge: Uint32Array
  inFrom: Uint32Array
  /** Threads that built them (this one and the workers). */
  threads: number
}

/** What every thread of the reverse pass reads and writes (plain data and shared arrays). */
export interface ReverseShared {
  objectCount: number
  /** In memory, or in the index being written (read in order: reverse-csr.ts). */
  outStart: Uint32Array | FileArray
  outTo: Uint32Array
  inStart: Uint32Array
  inEdge: Uint32Array
  inFrom: Uint32Array
  /** The thread that builds each block of targets' in-lists (this one is 0, worker i is i + 1; NO_THREAD: none, another pass's). */
  blockThread: Uint8Array
  /** Where the arrays are a pass's window of the reverse CSR (reverse-csr.ts: ReverseArrays). */
  targetBase: number
  edgeBase: number
  /** Targets per block, as a power of two (reverse-csr.ts: REVERSE_BLOCK_SHIFT; tests make it small). */
  blockShift: number
}

/**
 * A pass of the build under a memory limit (reverse-passes.ts): the in-lists of blocks
 * [firstBlock, endBlock) only, `edges` of them, which lie from place `edgeBase` in the whole CSR.
 */
export interface ReversePass {
  firstBlock: number
  endBlock: number
  edgeBase: number
  edges: number
}

/** What a reverse worker is handed. */
export interface ReverseWorkerData extends ReverseShared {
  thread: number
}

/** blockThread holds a thread in a byte, and this value for a block no thread of this pass builds. */
const NO_THREAD = 255
const MAX_THREADS = NO_THREAD

/**
 * Builds the reverse edges on `threads` threads: this one and worker threads. The targets are cut
 * into blocks of consecutive ids dealt out in turn, so that every thread meets the same mix of
 * much and little referenced objects (the first objects of the heap cost about twice as much per
 * edge as the last at scale 8: cutting the ids in two halves of equal edge counts left one thread
 * with nearly twice the other's work). Every thread walks all the edges (sequential reads) but
 * files only those into its blocks (reverse-csr.ts), so the writes are split between the threads.
 * The arrays are the same, byte for byte, whatever the number of threads (the same function
 * fills them). Where one thread is asked for, this thread builds every block.
 */
export function buildReverse(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array, edgeCount: number, threads: number, pass?: ReversePass, blockShift = REVERSE_BLOCK_SHIFT): ReverseEdges {
  const helpers = threads > 1 ? Math.min(threads, MAX_THREADS) - 1 : 0
  const blocks = reverseBlockCount(objectCount, blockShift)
  const {firstBlock, endBlock, edgeBase, edges} = pass ?? {firstBlock: 0, endBlock: blocks, edgeBase: 0, edges: edgeCount}
  const blockThread = sharedUint8(blocks).fill(NO_THREAD)
  for (let b = firstBlock; b < endBlock; b++) blockThread[b] = (b - firstBlock) % (helpers + 1)
  const targetBase = firstBlock * 2 ** blockShift
  const targets = Math.min(objectCount, endBlock * 2 ** blockShift) - targetBase
  // All shared: the workers fill them, the dominator worker reads inStart and inFrom.
  const shared: ReverseShared = {
    objectCount,
    outStart,
    outTo,
    // The whole CSR's inStart has one element more, for finishReverse's shift.
    inStart: sharedUint32(pass ? targets : objectCount + 1),
    inEdge: sharedUint32(edges),
    inFrom: sharedUint32(edges),
    blockThread,
    targetBase,
    edgeBase,
    blockShift,
  }
  const workers: WorkerJob[] = []
  try {
    for (let i = 0; i < helpers; i++) workers.push(WorkerJob.start('reverse edge worker', SCRIPT, {...shared, thread: i + 1} satisfies ReverseWorkerData))
    // This thread fills its blocks while the workers start.
    fillReverse(shared, 0)
    for (const worker of workers) {
      worker.awaitDone()
      worker.check(worker.next<WorkerFailure>())
    }
  } finally {
    for (const w of workers) w.end()
  }
  // A pass's inStart holds where each of its targets' lists ends (the caller puts it in place).
  if (!pass) finishReverse(shared.inStart, objectCount)
  return {inStart: shared.inStart, inEdge: shared.inEdge, inFrom: shared.inFrom, threads: helpers + 1}
}

const SCRIPT = new URL('./reverse-worker.js', import.meta.url)

/** Fills the lists of `thread`'s blocks. */
export function fillReverse(s: ReverseShared, thread: number): void {
  fillReverseShare(s.objectCount, s.outStart, s.outTo, {blockThread: s.blockThread, thread, blockShift: s.blockShift}, s)
}
