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
  /** The thread that builds each block of targets' in-lists (this one is 0, worker i is i + 1). */
  blockThread: Uint8Array
}

/** What a reverse worker is handed. */
export interface ReverseWorkerData extends ReverseShared {
  thread: number
}

/** blockThread holds a thread in a byte. */
const MAX_THREADS = 256

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
export function buildReverse(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array, edgeCount: number, threads: number): ReverseEdges {
  const helpers = threads > 1 ? Math.min(threads, MAX_THREADS) - 1 : 0
  const blocks = reverseBlockCount(objectCount)
  const blockThread = sharedUint8(blocks)
  for (let b = 0; b < blocks; b++) blockThread[b] = b % (helpers + 1)
  // All shared: the workers fill them, the dominator worker reads inStart and inFrom.
  const shared: ReverseShared = {
    objectCount,
    outStart,
    outTo,
    inStart: sharedUint32(objectCount + 1),
    inEdge: sharedUint32(edgeCount),
    inFrom: sharedUint32(edgeCount),
    blockThread,
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
  finishReverse(shared.inStart, objectCount)
  return {inStart: shared.inStart, inEdge: shared.inEdge, inFrom: shared.inFrom, threads: helpers + 1}
}

const SCRIPT = new URL('./reverse-worker.js', import.meta.url)

/** Fills the lists of `thread`'s blocks. */
export function fillReverse(s: ReverseShared, thread: number): void {
  fillReverseShare(s.objectCount, s.outStart, s.outTo, {blockThread: s.blockThread, thread, blockShift: REVERSE_BLOCK_SHIFT}, s)
}
