import type {AddressSpace} from '../core/address-space.js'
import type {MemorySource} from '../core/memory-source.js'
import type {Warnings} from '../heap/warnings.js'
import {checkIdWidth} from './csr.js'
import {concatBlocks, writeBlocks} from './edge-blocks.js'
import {EdgeSpill, type ScanRoom} from './edge-spill.js'
import {joinFreePointers, type FreePointers} from './free-pointers.js'
import {scanBuffer} from '../core/read-chunk.js'
import {rangeSlots, scanSpanRange, type RangeScan, type ScanTables, type SpanRange} from './object-scan.js'
import {WorkerJob, type WorkerFailure} from '../util/worker-job.js'
import {sharedFloat64, sharedUint32} from '../util/shared-arrays.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'
import type {FileArray} from '../util/file-array.js'

/**
 * Ranges the spans are cut into: several per thread, so that a thread that starts late (a worker
 * loading its modules) or meets denser objects takes fewer, and each range's reads stay large.
 */
const RANGES = 64

/** What a scan worker is handed (plain data and shared arrays). */
export interface ScanWorkerData {
  source: MemorySource
  tables: ScanTables
  ranges: SpanRange[]
  /** The range this worker scans first (given, not taken: so every worker started does scan). */
  first: number
  /** [0]: the next range to take. */
  counters: Int32Array
  outStart: Uint32Array
  firstWords: Float64Array
}

/** A worker's message: one range's result, or why it stopped. */
export type ScanWorkerMessage = {range: number; result: RangeScan} | WorkerFailure

/** The forward edges of every live object, merged from the ranges in address order. */
export interface ForwardScan {
  /** The first 8 bytes of every scanned object (vtable pointers name types), NaN where not scanned; empty when not asked for. */
  firstWords: Float64Array
  edgeCount: number
  outStart: Uint32Array
  /** In the index being written where the memory limit did not hold the join (edge-spill.ts: targetsInIndex). */
  outTo: Uint32Array | FileArray
  /** The checkpoints (edge-words.ts): edge ids ascending, and each one's pointer offset in its source. */
  checkpointEdge: Uint32Array
  checkpointOffset: Float64Array
  unreadableObjects: number
  scannedObjects: number
  scannedBytes: number
  /** Live objects' words that point into slots that are not live. */
  freePointers: FreePointers
  /** Threads that scanned (this one and the workers). */
  threads: number
  /** Ranges whose targets waited in a scratch file under the memory limit (edge-spill.ts). */
  spilledRanges: number
}

/**
 * Scans the live objects, cut into ranges of spans with about the same live bytes, on `threads`
 * threads: this one and worker threads that each open the core file themselves and, after a first
 * range given to them, take the next range not yet taken. Each range's edges, counts and warnings
 * are merged in range (address) order, so the result is the same, edge for edge and warning for
 * warning, whatever the number of threads. Where the worker's compiled file is not there (sources run by the test runner) or one
 * thread is asked for, this thread scans every range.
 */
export function scanForward(
  memory: AddressSpace,
  source: MemorySource,
  tables: ScanTables,
  warnings: Warnings,
  threads: number,
  progress?: ProgressUpdate,
  keepFirstWords = true,
  release?: (bytesLeft: number) => void,
  limit?: ScanRoom,
): ForwardScan {
  const total = tables.totalObjects
  checkIdWidth(total, 'objects')
  const outStart = sharedUint32(total + 1)
  const firstWords = keepFirstWords ? sharedFloat64(total).fill(NaN) : new Float64Array(0)
  const {ranges, liveBytes} = splitByLiveBytes(tables, RANGES)
  const results: Array<RangeScan | undefined> = new Array(ranges.length)
  const counters = new Int32Array(new SharedArrayBuffer(4))
  const helpers = Math.min(threads, ranges.length) - 1
  // Range 0 is this thread's, range i + 1 worker i's first; the rest go to whoever is free first
  // (set before any worker starts, so none can take a range already given).
  counters[0] = helpers + 1
  const workers: WorkerJob[] = []
  // Under a memory limit, finished ranges' targets go to a scratch file where the room runs short.
  const spill = limit ? new EdgeSpill(limit) : null
  try {
    try {
      for (let i = 0; i < helpers; i++) {
        const data: ScanWorkerData = {source, tables, ranges, first: i + 1, counters, outStart, firstWords}
        workers.push(WorkerJob.start('scan worker', SCRIPT, data))
      }
      const buf = scanBuffer()
      for (let r = 0; r < ranges.length; r = Atomics.add(counters, 0, 1)) {
        // In live bytes handed out so far (each thread has at most one range in hand): a rate
        // comparable with reading the file.
        progress?.('scan objects', ranges[r]!.liveBytesBefore, liveBytes, 'bytes')
        results[r] = scanSpanRange(memory, tables, ranges[r]!, outStart, firstWords, buf)
        if (spill?.short()) {
          // The workers' ranges done meanwhile, so that theirs can be spilled too. Only then:
          // where the room is ample the scan takes them at its end, as it always did.
          for (const worker of workers) receiveRanges(worker, results)
          spill.relieve(results)
        }
      }
      // This thread has nothing else to do: sleep until every worker has finished.
      for (const worker of workers) {
        worker.awaitDone()
        receiveRanges(worker, results)
      }
    } finally {
      for (const w of workers) w.end()
    }
    // The join allocates every target at once: where the room left does not hold them, they go
    // to the index instead (once outStart is final), or where there is no index to go to, the
    // ranges still in memory wait in the scratch file too (else each stays until its copy,
    // beside the whole join).
    const joinBytes = 4 * results.reduce((sum, r) => sum + (r?.edges.count ?? 0), 0)
    const toIndex = limit?.targetsInIndex && spill!.short(joinBytes) ? limit.targetsInIndex : undefined
    if (!toIndex) spill?.relieve(results, joinBytes)
    progress?.('scan objects', liveBytes, liveBytes, 'bytes')
    const join: Join = toIndex ? (lists, total) => writeBlocks(lists, toIndex(outStart, total)) : (lists, total) => concatBlocks(lists, total, true, release)
    return {...mergeRanges(tables, ranges, results, outStart, firstWords, warnings, join), threads: helpers + 1, spilledRanges: spill?.spilled ?? 0}
  } finally {
    spill?.remove()
  }
}

/** The ranges a worker has posted so far (a failure it posted is thrown). */
function receiveRanges(worker: WorkerJob, results: Array<RangeScan | undefined>): void {
  for (let m; (m = worker.check(worker.next<ScanWorkerMessage>())); ) results[m.range] = m.result
}

const SCRIPT = new URL('./scan-worker.js', import.meta.url)

/**
 * Cuts the spans into at most `count` contiguous ranges of about equal live bytes (a span is never
 * cut: a large object is one piece of work).
 */
function splitByLiveBytes(t: ScanTables, count: number): {ranges: SpanRange[]; liveBytes: number} {
  const liveBytes = new Float64Array(t.spanCount)
  let total = 0
  for (let s = 0; s < t.spanCount; s++) {
    const first = t.firstObject[s]!
    const end = first + t.spanObjectCount[s]!
    let n = 0
    for (let i = first; i < end; i++) n += (t.liveBits[i >>> 5]! >>> (i & 31)) & 1
    liveBytes[s] = n * t.objectSize[s]!
    total += liveBytes[s]!
  }
  const ranges: SpanRange[] = []
  let start = 0
  let sum = 0
  let before = 0
  for (let s = 0; s < t.spanCount; s++) {
    sum += liveBytes[s]!
    if (sum >= (total * (ranges.length + 1)) / count && ranges.length < count - 1) {
      ranges.push({start, end: s + 1, liveBytesBefore: before})
      start = s + 1
      before = sum
    }
  }
  ranges.push({start, end: t.spanCount, liveBytesBefore: before})
  return {ranges, liveBytes: total}
}

/** The ranges' targets (blocks, or a place in a scratch file) joined into one array, in memory or in the index. */
type Join = (lists: Array<Uint32Array[] | FileArray>, total: number) => Uint32Array | FileArray

/**
 * Joins the ranges' results in range order: outStart made global by adding each range's first
 * edge id to its slots and checkpoints, edge targets joined (`join`: into one exact array, shared
 * for the dominator worker, or into the index) while their blocks are freed, warnings replayed in
 * order, counts summed.
 */
function mergeRanges(
  t: ScanTables,
  ranges: SpanRange[],
  results: Array<RangeScan | undefined>,
  outStart: Uint32Array,
  firstWords: Float64Array,
  warnings: Warnings,
  join: Join,
): Omit<ForwardScan, 'threads' | 'spilledRanges'> {
  let base = 0
  let unreadable = 0
  let scannedObjects = 0
  let scannedBytes = 0
  let checkpoints = 0
  for (let r = 0; r < ranges.length; r++) {
    const result = results[r]
    if (!result) throw new Error(`scan range ${r} has no result`)
    const slots = rangeSlots(t, ranges[r]!)
    const end = r === ranges.length - 1 ? t.totalObjects + 1 : slots.end
    if (base > 0) for (let i = slots.start; i < end; i++) outStart[i]! += base
    const marks = result.edges.checkpointEdge
    if (base > 0) for (let i = 0; i < marks.length; i++) marks[i]! += base
    checkpoints += marks.length
    base += result.edges.count
    checkIdWidth(base, 'edges')
    warnings.merge(result.warnings)
    unreadable += result.unreadableObjects
    scannedObjects += result.scannedObjects
    scannedBytes += result.scannedBytes
  }
  const done = results as RangeScan[]
  const checkpointEdge = new Uint32Array(checkpoints)
  const checkpointOffset = new Float64Array(checkpoints)
  for (let r = 0, at = 0; r < done.length; r++) {
    checkpointEdge.set(done[r]!.edges.checkpointEdge, at)
    checkpointOffset.set(done[r]!.edges.checkpointOffset, at)
    at += done[r]!.edges.checkpointEdge.length
  }
  const outTo = join(
    done.map(r => r.edges.parked ?? r.edges.to),
    base,
  )
  if (unreadable > 0) warnings.add('scan', `${unreadable} live objects are not in the core (not dumped or truncated) and were not scanned`)
  return {
    firstWords,
    edgeCount: base,
    outStart,
    outTo,
    checkpointEdge,
    checkpointOffset,
    unreadableObjects: unreadable,
    scannedObjects,
    scannedBytes,
    freePointers: joinFreePointers(done.map(r => r.freePointers)),
  }
}
