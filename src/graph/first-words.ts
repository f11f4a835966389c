import type {AddressSpace} from '../core/address-space.js'
import type {MemorySource} from '../core/memory-source.js'
import type {HeapModel} from '../heap/heap-model.js'
import {LIVE} from '../heap/states.js'
import {sharedFloat64} from '../util/shared-arrays.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'
import {WorkerJob, type WorkerFailure} from '../util/worker-job.js'
import {CHUNK, scanBuffer} from './object-scan.js'

const TWO32 = 0x1_0000_0000

/** Objects of at least this size have their first word read alone: the rest of their bytes is not wanted. */
const ALONE = 4096

/** Pieces the spans are cut into, taken by whichever thread is free (several per thread: one may start late). */
const RANGES = 32

/** The span table as a worker is handed it (typed arrays and numbers only). */
export interface FirstWordTables {
  start: Float64Array
  pages: Float64Array
  firstObject: Float64Array
  objectCount: Float64Array
  objectSize: Float64Array
  pageSize: number
  /** Slot states (shared). */
  state: Uint8Array
}

/** What a first-words worker is handed. */
export interface FirstWordsWorkerData {
  source: MemorySource
  tables: FirstWordTables
  /** Span indexes where each range starts, and the end. */
  bounds: Uint32Array
  /** The range the worker reads first (given, so every worker started reads one). */
  first: number
  /** [0]: the next range to take. */
  counters: Int32Array
  words: Float64Array
}

/** A worker's message: one more range done, or why it stopped. */
export type FirstWordsWorkerMessage = {range: number} | WorkerFailure

/**
 * The first 8 bytes of every live object (vtable pointers name types), NaN where the object is
 * not live, smaller than 8 bytes or not in the core: what the pointer scan would record
 * (object-scan.ts), without the scan, so that types are known before the graph. Spans of small
 * objects are read a run of neighbours at a time, larger objects a word each. On `threads`
 * threads: this one and workers that open the core themselves, each taking the next range of
 * spans (of about equal bytes) not yet taken; every range fills its own slots, so the result does
 * not depend on the threads.
 */
export function firstWordsOf(memory: AddressSpace, source: MemorySource, heap: HeapModel, threads = 1, progress?: ProgressUpdate): Float64Array {
  const sp = heap.spans
  const tables: FirstWordTables = {start: sp.start, pages: sp.pages, firstObject: sp.firstObject, objectCount: sp.objectCount, objectSize: sp.objectSize, pageSize: heap.pageSize, state: heap.state}
  const words = sharedFloat64(sp.totalObjects).fill(NaN)
  const bounds = rangeBounds(tables, RANGES)
  const ranges = bounds.length - 1
  const counters = new Int32Array(new SharedArrayBuffer(4))
  const helpers = Math.max(0, Math.min(threads, ranges) - 1)
  counters[0] = helpers + 1
  const workers: WorkerJob[] = []
  try {
    for (let i = 0; i < helpers; i++) {
      const data: FirstWordsWorkerData = {source, tables, bounds, first: i + 1, counters, words}
      workers.push(WorkerJob.start('first-words worker', SCRIPT, data))
    }
    const buf = scanBuffer()
    for (let r = 0; r < ranges; r = Atomics.add(counters, 0, 1)) {
      progress?.('types', r, ranges)
      readFirstWords(memory, tables, bounds[r]!, bounds[r + 1]!, words, buf)
    }
    for (const worker of workers) {
      worker.awaitDone()
      while (worker.check(worker.next<FirstWordsWorkerMessage>()));
    }
  } finally {
    for (const w of workers) w.end()
  }
  return words
}

const SCRIPT = new URL('./first-words-worker.js', import.meta.url)

/** Span indexes cutting the spans into at most `count` ranges of about equal bytes. */
function rangeBounds(t: FirstWordTables, count: number): Uint32Array {
  const n = t.start.length
  let total = 0
  for (let s = 0; s < n; s++) total += t.objectCount[s]! * t.objectSize[s]!
  const bounds = [0]
  for (let s = 0, sum = 0; s < n; s++) {
    sum += t.objectCount[s]! * t.objectSize[s]!
    if (sum >= (total * bounds.length) / count && bounds.length < count && s + 1 < n) bounds.push(s + 1)
  }
  bounds.push(n)
  return Uint32Array.from(bounds)
}

/** The first words of the live objects of spans [from, to) into `words`; `buf` is the thread's read buffer (scanBuffer()). */
export function readFirstWords(memory: AddressSpace, t: FirstWordTables, from: number, to: number, words: Float64Array, buf: Buffer): void {
  const {start, pages, firstObject, objectCount, objectSize, pageSize, state} = t
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
  /** Spans [a, b), which lie page after page within CHUNK bytes, read at once. */
  const run = (a: number, b: number) => {
    const base = start[a]!
    const end = start[b - 1]! + objectCount[b - 1]! * objectSize[b - 1]!
    if (!memory.readInto(base, end - base, buf)) {
      for (let s = a; s < b; s++) alone(s)
      return
    }
    for (let s = a; s < b; s++) {
      const size = objectSize[s]!
      if (size < 8) continue
      for (let k = 0, first = firstObject[s]!, n = objectCount[s]!; k < n; k++) {
        if (state[first + k] !== LIVE) continue
        const w = (start[s]! + k * size - base) / 4
        words[first + k] = u32[w + 1]! * TWO32 + u32[w]!
      }
    }
  }
  const hasLive = (s: number) => {
    for (let i = firstObject[s]!, end = i + objectCount[s]!; i < end; i++) if (state[i] === LIVE) return true
    return false
  }

  for (let s = from; s < to; ) {
    if (objectSize[s]! >= ALONE || !hasLive(s)) {
      if (objectSize[s]! >= ALONE) alone(s)
      s++
      continue
    }
    // Neighbours of small objects whose pages follow each other, up to CHUNK bytes.
    let next = s + 1
    const base = start[s]!
    while (next < to && objectSize[next]! < ALONE && start[next] === start[next - 1]! + pages[next - 1]! * pageSize && start[next]! + objectCount[next]! * objectSize[next]! - base <= CHUNK && hasLive(next)) next++
    if (start[s]! + objectCount[s]! * objectSize[s]! - base > CHUNK) alone(s)
    else run(s, next)
    s = next
  }
}
