import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
import {MessageChannel, type MessagePort, Worker, receiveMessageOnPort} from 'node:worker_threads'
import {countReverseShare, fillReverseShare, finishReverse, reverseBlockCount} from './csr.js'
import {awaitSignal} from '../util/await-signal.js'
import {sharedFloat64, sharedUint32, sharedUint8} from '../util/shared-arrays.js'

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
  edgeCount: number
  outStart: Uint32Array
  outTo: Uint32Array
  inStart: Uint32Array
  inEdge: Uint32Array
  inFrom: Uint32Array
  /** Threads building them. */
  threads: number
  /** The thread that builds each block of targets' in-lists (this one is 0, worker i is i + 1). */
  blockThread: Uint8Array
  /** Each block's incoming-edge total, written before its thread counts itself in `counted`. */
  blockTotals: Float64Array
  /** [0]: threads done counting. */
  counted: Int32Array
  /** [0]: workers finished. */
  finished: Int32Array
}

/** What a reverse worker is handed. */
export interface ReverseWorkerData extends ReverseShared {
  thread: number
  port: MessagePort
}

/** blockThread holds a thread in a byte. */
const MAX_THREADS = 256

/**
 * Builds the reverse edges on `threads` threads: this one and worker threads. The targets are cut
 * into blocks of consecutive ids dealt out in turn, so that every thread meets the same mix of
 * much and little referenced objects (the first objects of the heap cost about twice as much per
 * edge as the last at scale 8: cutting the ids in two halves of equal edge counts left one thread
 * with nearly twice the other's work). Every thread walks all the edges (sequential reads) but
 * counts and files only those into its blocks, so the random writes, the pass's real cost, are
 * split between the threads. A block's lists start after the incoming edges of the blocks before
 * it: the threads publish their blocks' totals and wait for each other once before filling. The
 * arrays are the same, byte for byte, whatever the number of threads (the same functions fill
 * them). Where the worker's compiled file is not there (sources run by the test runner) or one
 * thread is asked for, this thread builds every block.
 */
export function buildReverse(objectCount: number, outStart: Uint32Array, outTo: Uint32Array, edgeCount: number, threads: number): ReverseEdges {
  const script = new URL('./reverse-worker.js', import.meta.url)
  const helpers = threads > 1 && fs.existsSync(fileURLToPath(script)) ? Math.min(threads, MAX_THREADS) - 1 : 0
  const blocks = reverseBlockCount(objectCount)
  const blockThread = sharedUint8(blocks)
  for (let b = 0; b < blocks; b++) blockThread[b] = b % (helpers + 1)
  // All shared: the workers fill them, the dominator worker reads inStart and inFrom.
  const shared: ReverseShared = {
    objectCount,
    edgeCount,
    outStart,
    outTo,
    threads: helpers + 1,
    inStart: sharedUint32(objectCount + 1),
    inEdge: sharedUint32(edgeCount),
    inFrom: sharedUint32(edgeCount),
    blockThread,
    blockTotals: sharedFloat64(blocks),
    counted: new Int32Array(new SharedArrayBuffer(4)),
    finished: new Int32Array(new SharedArrayBuffer(4)),
  }
  const workers: Worker[] = []
  const ports: MessagePort[] = []
  for (let i = 0; i < helpers; i++) {
    const {port1, port2} = new MessageChannel()
    const data: ReverseWorkerData = {...shared, thread: i + 1, port: port2}
    const worker = new Worker(script, {workerData: data, transferList: [port2]})
    worker.unref()
    workers.push(worker)
    ports.push(port1)
  }
  try {
    // This thread counts its blocks while the workers start.
    countReverse(shared, 0)
    fillReverse(shared, 0)
    awaitSignal(shared.finished, 0, helpers)
    for (const port of ports) {
      const message = receiveMessageOnPort(port)?.message as {error: string} | undefined
      if (message) throw new Error(`reverse edge worker failed: ${message.error}`)
    }
  } finally {
    for (const port of ports) port.close()
    for (const w of workers) void w.terminate()
  }
  finishReverse(shared.inStart, objectCount)
  return {inStart: shared.inStart, inEdge: shared.inEdge, inFrom: shared.inFrom, threads: helpers + 1}
}

/** Counts the incoming edges of `thread`'s blocks and tells the other threads it has. */
export function countReverse(s: ReverseShared, thread: number): void {
  countReverseShare(s.outTo, s.edgeCount, s.objectCount, {blockThread: s.blockThread, thread}, s.inStart, s.blockTotals)
  Atomics.add(s.counted, 0, 1)
  Atomics.notify(s.counted, 0)
}

/** Once every thread has counted, fills the lists of `thread`'s blocks. */
export function fillReverse(s: ReverseShared, thread: number): void {
  awaitSignal(s.counted, 0, s.threads)
  fillReverseShare(s.objectCount, s.outStart, s.outTo, {blockThread: s.blockThread, thread}, s.blockTotals, s)
}

