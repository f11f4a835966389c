import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {CHUNK} from '../core/read-chunk.js'
import {Warnings} from '../heap/warnings.js'
import {EdgeBlocks, type EdgeBlockList} from './edge-blocks.js'
import {FreePointerLog, type FreePointers} from './free-pointers.js'
import type {CheckpointRule} from './edge-words.js'
import type {PointerLookup} from './live-lookup.js'
import {FREE_SLOT, LIVE_SLOT, emptyBatch, type PointerBatch, resolvePointers} from './pointer-batch.js'

/** The granularity at which a core holds or lacks memory: the smallest kernel page (4 KiB), of which larger ones (aarch64's 16 and 64 KiB) are multiples. */
export const CORE_PAGE = 4096
const TWO32 = 0x1_0000_0000

/**
 * What scanning a range of spans needs: the pointer lookup and the span table's sizes, typed
 * arrays and numbers only, so a worker thread can be handed them (the large ones shared).
 */
export interface ScanTables extends PointerLookup {
  spanCount: number
  spanPages: Float64Array
  spanObjectCount: Float64Array
  pageSize: number
  totalObjects: number
  /** Which edges keep their offset (edge-words.ts). */
  checkpoints: CheckpointRule
  /** Slots (ascending) whose referrers among pointers into free slots are all kept: damaged free objects. */
  watchSlots: Uint32Array
}

/** A run of spans [start, end) in address order, scanned as one piece of work. */
export interface SpanRange {
  start: number
  end: number
  /** Live bytes in the spans before this range (for the progress display's rate). */
  liveBytesBefore: number
}

/** One range's results; edge ids and outStart values count from the range's first edge. */
export interface RangeScan {
  edges: EdgeBlockList
  /** Words that point into slots that are not live (dangling, or stale). */
  freePointers: FreePointers
  warnings: Pick<Warnings, 'list' | 'counts'>
  unreadableObjects: number
  scannedObjects: number
  scannedBytes: number
}

/** The object slots of a span range: [first, end). */
export function rangeSlots(t: ScanTables, range: SpanRange): {start: number; end: number} {
  return {start: range.start < t.spanCount ? t.firstObject[range.start]! : t.totalObjects, end: range.end < t.spanCount ? t.firstObject[range.end]! : t.totalObjects}
}

/**
 * Reads every live object of the spans in `range` once, in address order, and records each
 * aligned word that points into a live object (interior pointers included) as an edge. Writes
 * outStart for the range's slots (and for the end slot after the last span) counting from the
 * range's first edge, and the first word of each scanned object into firstWords; these are
 * shared arrays when the range runs on a worker thread, each range owning its slots. The result
 * does not depend on how the spans are cut into ranges: the caller merges ranges in order.
 * `buf` is the thread's read buffer (scanBuffer()), reused from range to range. `batchWords`: the
 * words whose targets are looked up together (pointer-batch.ts).
 */
export function scanSpanRange(memory: AddressSpace, t: ScanTables, range: SpanRange, outStart: Uint32Array, firstWords: Float64Array, buf: Buffer, batchWords?: number): RangeScan {
  const warnings = new Warnings()
  const sink = new EdgeBlocks(t.checkpoints)
  const free = new FreePointerLog(t.watchSlots)
  const pageSize = t.pageSize
  const {spanStart, objectSize, firstObject, liveBits, spanObjectCount, spanPages} = t
  const words = new Uint32Array(buf.buffer, buf.byteOffset, CHUNK >>> 2)
  const slots = rangeSlots(t, range)
  // Empty when the caller has the first words already (first-words.ts).
  const keepFirstWords = firstWords.length > 0
  let nextSlot = slots.start // outStart is filled up to here
  let unreadable = 0
  let scannedObjects = 0
  let scannedBytes = 0

  const isLive = (slot: number) => (liveBits[slot >>> 5]! & (1 << (slot & 31))) !== 0
  const startObject = (slot: number) => {
    while (nextSlot <= slot) outStart[nextSlot++] = sink.count
  }
  // An object's edges are recorded when its words' batch is resolved (pointer-batch.ts): its
  // outStart and the sink's object start then, at its first edge. The slots before it that had
  // none get the same outStart as they would have had at their turn (no edge came in between).
  const batch = emptyBatch(batchWords)
  const flush = () => recordBatch(batch, t, sink, free, slot => {
    startObject(slot)
    sink.beginObject()
  })

  /** Scans the live objects of span s whose bytes are in buf from bufAddr (the whole span is there). */
  const scanSpanInBuffer = (s: number, bufAddr: number) => {
    const first = firstObject[s]!
    const count = spanObjectCount[s]!
    const size = objectSize[s]!
    const sStart = spanStart[s]!
    for (let k = 0; k < count; k++) {
      const slot = first + k
      if (!isLive(slot)) continue
      const objStart = sStart + k * size
      const w0 = (objStart - bufAddr) >>> 2
      if (size >= 8 && keepFirstWords) firstWords[slot] = words[w0 + 1]! * TWO32 + words[w0]!
      gatherPointers(words, w0, w0 + Math.floor(size / 8) * 2, bufAddr, objStart, slot, t, batch, flush)
      scannedObjects++
      scannedBytes += size
    }
  }

  /** A span (or run) that could not be read whole: each live object on its own, counting failures. */
  const scanSpanByObject = (s: number) => {
    const first = firstObject[s]!
    const count = spanObjectCount[s]!
    const size = objectSize[s]!
    const sStart = spanStart[s]!
    for (let k = 0; k < count; k++) {
      const slot = first + k
      if (!isLive(slot)) continue
      if (!scanObjectByPieces(slot, sStart + k * size, size)) {
        unreadable++
        continue
      }
      scannedObjects++
      scannedBytes += size
    }
  }

  /**
   * One object read in CHUNK slices, and a slice the core does not hold whole page by page: the
   * pointers in the pages that are there count, the missing bytes are one warning with their
   * address. False (nothing recorded) when the core holds none of the object.
   */
  const scanObjectByPieces = (slot: number, objStart: number, size: number): boolean => {
    const words8 = Math.floor(size / 8) * 8
    let present = 0
    let missing = 0
    let firstMissing = -1
    let missingRanges = 0
    let lastMissingEnd = -1
    const scanPiece = (at: number, n: number): boolean => {
      if (!memory.readInto(at, n, buf)) return false
      if (at === objStart && n >= 8 && keepFirstWords) firstWords[slot] = words[1]! * TWO32 + words[0]!
      gatherPointers(words, 0, n >>> 2, at, objStart, slot, t, batch, flush)
      present += n
      return true
    }
    for (let done = 0; done < words8; done += CHUNK) {
      const n = Math.min(CHUNK, words8 - done)
      if (scanPiece(objStart + done, n)) continue
      const end = objStart + done + n
      for (let p = objStart + done; p < end; ) {
        const q = Math.min(end, (Math.floor(p / CORE_PAGE) + 1) * CORE_PAGE)
        if (!scanPiece(p, q - p)) {
          if (firstMissing < 0) firstMissing = p
          if (p !== lastMissingEnd) missingRanges++
          lastMissingEnd = q
          missing += q - p
        }
        p = q
      }
    }
    if (present === 0 && words8 > 0) return false
    if (missing > 0) {
      const why = memory.whyUnreadable(firstMissing, 1) ?? 'unreadable'
      const more = missingRanges > 1 ? ` (first of ${missingRanges} missing ranges)` : ''
      warnings.add(
        'scan',
        `object ${hex(objStart)} (${size} bytes): ${missing} bytes from ${hex(firstMissing)}${more} are not in the core (${why}); pointers in its other ${present} bytes are counted`,
        objStart,
        firstMissing,
      )
    }
    return true
  }

  const hasLive = (s: number) => {
    const first = firstObject[s]!
    const end = first + spanObjectCount[s]!
    for (let i = first; i < end; i++) if (isLive(i)) return true
    return false
  }

  let s = range.start
  while (s < range.end) {
    if (!hasLive(s)) {
      s++
      continue
    }
    const bytes = spanPages[s]! * pageSize
    if (bytes > CHUNK) {
      // A large span holds one object (or a class span too big for the buffer: by object).
      scanSpanByObject(s)
      s++
      continue
    }
    // Batch this span with following contiguous spans that have live objects, up to CHUNK bytes
    // (within the range: a span's result does not depend on the batch it is read in).
    const runStart = spanStart[s]!
    let runEnd = runStart + bytes
    let e = s + 1
    while (e < range.end) {
      const b = spanPages[e]! * pageSize
      if (spanStart[e]! !== runEnd || runEnd + b - runStart > CHUNK || !hasLive(e)) break
      runEnd += b
      e++
    }
    if (memory.readInto(runStart, runEnd - runStart, buf)) {
      for (let i = s; i < e; i++) scanSpanInBuffer(i, runStart)
    } else {
      for (let i = s; i < e; i++) {
        if (memory.readInto(spanStart[i]!, spanPages[i]! * pageSize, buf)) scanSpanInBuffer(i, spanStart[i]!)
        else scanSpanByObject(i)
      }
    }
    s = e
  }
  flush()
  // Slots after the range's last live object start where the next range does (its first edge).
  const last = range.end >= t.spanCount ? t.totalObjects : slots.end - 1
  if (slots.start <= last) startObject(last)
  return {edges: sink.finish(), freePointers: free.finish(), warnings, unreadableObjects: unreadable, scannedObjects, scannedBytes}
}

/**
 * Every word pointing into a live object among words [w0, w1) (pairs of u32 halves) of `words`,
 * which holds memory from bufAddr and belongs to the object at fromStart, recorded as an edge
 * of that object in `sink`; words pointing into slots that are not live go to `free`. (The scan
 * itself gathers the words of many objects before it resolves them.)
 */
export function scanObjectWords(words: Uint32Array, w0: number, w1: number, bufAddr: number, fromStart: number, t: PointerLookup, sink: EdgeBlocks, free: FreePointerLog): void {
  const batch = emptyBatch()
  const flush = () => recordBatch(batch, t, sink, free, () => {})
  gatherPointers(words, w0, w1, bufAddr, fromStart, 0, t, batch, flush)
  flush()
}

/**
 * The hot loop: words [w0, w1) (pairs of u32 halves) of `words`, which holds memory from bufAddr,
 * belong to the object in slot `source`, starting at fromStart; every word whose value lies in the
 * spans' range goes into `batch` (flushed by `flush` when full), to be looked up with its batch.
 * Rejects on the high half first, then the whole value; no allocation, no BigInt.
 */
function gatherPointers(words: Uint32Array, w0: number, w1: number, bufAddr: number, fromStart: number, source: number, t: PointerLookup, batch: PointerBatch, flush: () => void): void {
  const {lo, hi, loHi, hiHi} = t
  const {value, address, offset} = batch
  const sources = batch.source
  for (let w = w0; w < w1; w += 2) {
    const vh = words[w + 1]!
    if (vh < loHi || vh > hiHi) continue
    const v = vh * TWO32 + words[w]!
    if (v < lo || v >= hi) continue
    if (batch.length === batch.capacity) flush()
    const i = batch.length++
    const at = bufAddr + w * 4
    value[i] = v
    address[i] = at
    offset[i] = at - fromStart
    sources[i] = source
  }
}

/**
 * Resolves the batch's words and records them in order: an edge for each that points into a live
 * object (`startSource` called before the first edge of each source object, in whichever batch it
 * comes), a pointer into a
 * free slot for each that points into one. Empties the batch.
 */
function recordBatch(batch: PointerBatch, t: PointerLookup, sink: EdgeBlocks, free: FreePointerLog, startSource: (slot: number) => void): void {
  resolvePointers(batch, t)
  const {kind, target, source, offset} = batch
  for (let i = 0; i < batch.length; i++) {
    const k = kind[i]!
    if (k === LIVE_SLOT) {
      // An object's words may span batches: it starts once.
      if (source[i] !== batch.lastSource) {
        batch.lastSource = source[i]!
        startSource(batch.lastSource)
      }
      sink.add(target[i]!, offset[i]!)
    } else if (k === FREE_SLOT) free.add(batch.address[i]!, batch.value[i]!, target[i]!)
  }
  batch.length = 0
}
