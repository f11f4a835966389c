import {hex} from '../errors.js'
import {REGISTER_NAMES} from '../core/threads.js'
import type {Program} from '../program/program.js'
import type {TcmallocHeap} from '../tcmalloc/heap.js'
import {LIVE} from '../tcmalloc/object-states.js'
import {Warnings} from '../tcmalloc/warnings.js'
import {buildReverse, checkIdWidth, MAX_IDS, OFFSET_OVERFLOW, ROOT_KIND_NAMES, ROOT_REGISTER, RootBuilder, type HeapGraph} from './csr.js'
import {sharedUint32} from '../util/shared-arrays.js'
import {buildLiveLookup, LiveResolver, SPAN_STRIDE, spanOf, type LiveLookup} from './live-lookup.js'
import {rootRanges, type RootRange, type RootSet} from './roots.js'

export {edgeSource, inEdges, outEdges, rootsOf, ROOT_KIND_NAMES, type HeapGraph, type IndexRange} from './csr.js'

export interface ScanOptions {
  progress?: (phase: string, done: number, total: number) => void
  /** Root kinds to scan (ROOT_* of csr.ts); all when absent. */
  rootKinds?: ReadonlySet<number>
}

/** Bytes read from the core at once: a run of neighbouring spans, or a slice of a large one. */
const CHUNK = 16 * 1024 * 1024
/** The granularity at which a core holds or lacks memory (x86-64 pages). */
const CORE_PAGE = 4096
const TWO32 = 0x1_0000_0000

/** The graph with the warnings met while building it (unreadable ranges, stacks not found). */
/** The graph as the phases after the scan use it: without the edge offsets and reverse edge ids (the index has those). */
export type AnalysedGraph = Omit<ScannedGraph, 'outOffset' | 'outToOffset' | 'inEdge'>

export interface ScannedGraph extends HeapGraph {
  warnings: Warnings
  /** The first 8 bytes of every scanned object, NaN where not scanned (for naming types). */
  firstWords: Float64Array
  /** Every root region found, scanned or not (kinds left out by the caller are not). */
  roots: RootSet & {kinds: ReadonlySet<number>}
}

/**
 * Reads every live object once, in address order, and records each aligned word that points into
 * a live object (interior pointers included) as an edge; then scans registers, stacks and module
 * data for roots the same way. Free objects are neither scanned nor targets.
 */
export function scanHeapGraph(program: Program, heap: TcmallocHeap, options: ScanOptions = {}): ScannedGraph {
  const warnings = new Warnings()
  options.progress?.('scan objects', 0, heap.spans.count)
  const lookup = buildLiveLookup(heap)
  const edges = scanObjects(program, heap, lookup, warnings, options)
  options.progress?.('reverse edges', 0, 1)
  const {inStart, inEdge, inFrom} = buildReverse(heap.spans.totalObjects, edges.outStart, edges.outTo, edges.edgeCount)
  options.progress?.('roots', 0, 1)
  const rootKinds = options.rootKinds ?? new Set(ROOT_KIND_NAMES.keys())
  const rootSet = rootRanges(program, heap, warnings)
  const roots = scanRoots(program, lookup, warnings, rootSet.ranges, rootKinds)
  options.progress?.('roots', 1, 1)
  return {
    objectCount: heap.spans.totalObjects,
    ...edges,
    inStart,
    inEdge,
    inFrom,
    ...roots.finish(),
    offsetOverflows: edges.offsetOverflows + roots.overflows,
    warnings,
    roots: {...rootSet, kinds: rootKinds},
  }
}

interface ForwardEdges {
  /** The first 8 bytes of every scanned object (vtable pointers name types), NaN where not scanned. */
  firstWords: Float64Array
  edgeCount: number
  outStart: Uint32Array
  outTo: Uint32Array
  outOffset: Uint32Array
  outToOffset: Uint32Array
  unreadableObjects: number
  scannedObjects: number
  scannedBytes: number
  offsetOverflows: number
}

function scanObjects(program: Program, heap: TcmallocHeap, t: LiveLookup, warnings: Warnings, options: ScanOptions): ForwardEdges {
  const memory = program.core.memory
  const spans = heap.spans
  const pageSize = heap.pageSize
  const state = heap.state
  const total = spans.totalObjects
  checkIdWidth(total, 'objects')
  const outStart = sharedUint32(total + 1)
  const firstWords = new Float64Array(total).fill(NaN)
  const initial = Math.max(1024, Math.min(1 << 24, total))
  const sink = new EdgeSink(initial)
  // Own ArrayBuffer at offset 0, so a Uint32Array view is aligned.
  const buf = Buffer.allocUnsafeSlow(CHUNK)
  const words = new Uint32Array(buf.buffer, buf.byteOffset, CHUNK >>> 2)

  const {spanStart, objectSize, firstObject} = t
  let nextSlot = 0 // outStart is filled up to here
  let unreadable = 0
  let scannedObjects = 0
  let scannedBytes = 0

  const startObject = (slot: number) => {
    while (nextSlot <= slot) outStart[nextSlot++] = sink.count
  }

  /** Scans the live objects of span s whose bytes are in buf from bufAddr (the whole span is there). */
  const scanSpanInBuffer = (s: number, bufAddr: number) => {
    const first = firstObject[s]!
    const count = spans.objectCount[s]!
    const size = objectSize[s]!
    const sStart = spanStart[s]!
    for (let k = 0; k < count; k++) {
      const slot = first + k
      if (state[slot] !== LIVE) continue
      startObject(slot)
      const objStart = sStart + k * size
      const w0 = (objStart - bufAddr) >>> 2
      if (size >= 8) firstWords[slot] = words[w0 + 1]! * TWO32 + words[w0]!
      scanObjectWords(words, w0, w0 + Math.floor(size / 8) * 2, bufAddr, objStart, t, sink)
      scannedObjects++
      scannedBytes += size
    }
  }

  /** A span (or run) that could not be read whole: each live object on its own, counting failures. */
  const scanSpanByObject = (s: number) => {
    const first = firstObject[s]!
    const count = spans.objectCount[s]!
    const size = objectSize[s]!
    const sStart = spanStart[s]!
    for (let k = 0; k < count; k++) {
      const slot = first + k
      if (state[slot] !== LIVE) continue
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
    startObject(slot)
    const words8 = Math.floor(size / 8) * 8
    let present = 0
    let missing = 0
    let firstMissing = -1
    let missingRanges = 0
    let lastMissingEnd = -1
    const scanPiece = (at: number, n: number): boolean => {
      if (!memory.readInto(at, n, buf)) return false
      if (at === objStart && n >= 8) firstWords[slot] = words[1]! * TWO32 + words[0]!
      scanObjectWords(words, 0, n >>> 2, at, objStart, t, sink)
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
    const end = first + spans.objectCount[s]!
    for (let i = first; i < end; i++) if (state[i] === LIVE) return true
    return false
  }

  const reportEvery = Math.max(1, Math.floor(spans.count / 200))
  let reported = 0
  let s = 0
  while (s < spans.count) {
    if (s - reported >= reportEvery) {
      options.progress?.('scan objects', s, spans.count)
      reported = s
    }
    if (!hasLive(s)) {
      s++
      continue
    }
    const bytes = spans.pages[s]! * pageSize
    if (bytes > CHUNK) {
      // A large span holds one object (or a class span too big for the buffer: by object).
      scanSpanByObject(s)
      s++
      continue
    }
    // Batch this span with following contiguous spans that have live objects, up to CHUNK bytes.
    const runStart = spanStart[s]!
    let runEnd = runStart + bytes
    let e = s + 1
    while (e < spans.count) {
      const b = spans.pages[e]! * pageSize
      if (spanStart[e]! !== runEnd || runEnd + b - runStart > CHUNK || !hasLive(e)) break
      runEnd += b
      e++
    }
    if (memory.readInto(runStart, runEnd - runStart, buf)) {
      for (let i = s; i < e; i++) scanSpanInBuffer(i, runStart)
    } else {
      for (let i = s; i < e; i++) {
        if (memory.readInto(spanStart[i]!, spans.pages[i]! * pageSize, buf)) scanSpanInBuffer(i, spanStart[i]!)
        else scanSpanByObject(i)
      }
    }
    s = e
  }
  options.progress?.('scan objects', spans.count, spans.count)
  while (nextSlot <= total) outStart[nextSlot++] = sink.count
  const edgeCount = sink.count
  sink.trim()
  if (unreadable > 0) warnings.add('scan', `${unreadable} live objects are not in the core (not dumped or truncated) and were not scanned`)
  return {
    firstWords,
    edgeCount,
    outStart,
    outTo: sink.to,
    outOffset: sink.offset,
    outToOffset: sink.toOffset,
    unreadableObjects: unreadable,
    scannedObjects,
    scannedBytes,
    offsetOverflows: sink.overflows,
  }
}

/** Forward edges being collected, in typed arrays that double when full. */
class EdgeSink {
  to: Uint32Array
  offset: Uint32Array
  toOffset: Uint32Array
  count = 0
  overflows = 0

  constructor(capacity: number) {
    this.to = sharedUint32(capacity)
    this.offset = new Uint32Array(capacity)
    this.toOffset = new Uint32Array(capacity)
  }

  grow(): void {
    checkIdWidth(this.to.length + 1, 'edges')
    const n = Math.min(this.to.length * 2, MAX_IDS)
    const to = sharedUint32(n)
    to.set(this.to)
    this.to = to
    const offset = new Uint32Array(n)
    offset.set(this.offset)
    this.offset = offset
    const toOffset = new Uint32Array(n)
    toOffset.set(this.toOffset)
    this.toOffset = toOffset
  }

  /** Cuts the arrays to count, one at a time so that only one spare copy exists at once. */
  trim(): void {
    if (this.to.length === this.count) return
    const to = sharedUint32(this.count) // shared: the dominator worker reads it
    to.set(this.to.subarray(0, this.count))
    this.to = to
    this.offset = this.offset.slice(0, this.count)
    this.toOffset = this.toOffset.slice(0, this.count)
  }
}

/**
 * The hot loop: words [w0, w1) (pairs of u32 halves) of `words`, which holds memory from bufAddr,
 * belong to the object starting at fromStart; every word pointing into a live object is an edge.
 * Rejects on the high half first, then the whole value against the span range, then looks up the
 * span in the page table; no allocation, no BigInt.
 */
function scanObjectWords(words: Uint32Array, w0: number, w1: number, bufAddr: number, fromStart: number, t: LiveLookup, sink: EdgeSink): void {
  const {lo, hi, loHi, hiHi, invPage, chunkPages, root, leaves, spanInfo, liveBits} = t
  const base = bufAddr - fromStart
  for (let w = w0; w < w1; w += 2) {
    const vh = words[w + 1]!
    if (vh < loHi || vh > hiHi) continue
    const v = vh * TWO32 + words[w]!
    if (v < lo || v >= hi) continue
    let s: number
    if (root !== null) {
      const page = Math.floor((v - lo) * invPage)
      const chunk = Math.floor(page / chunkPages)
      const leaf = root[chunk]!
      if (leaf < 0) continue
      s = leaves[leaf * chunkPages + (page - chunk * chunkPages)]!
    } else {
      s = spanOf(t, v)
    }
    if (s < 0) continue
    const info = s * SPAN_STRIDE
    if (v >= spanInfo[info + 1]!) continue
    const sStart = spanInfo[info]!
    const size = spanInfo[info + 2]!
    const k = Math.floor((v - sStart) / size)
    const slot = spanInfo[info + 3]! + k
    if ((liveBits[slot >>> 5]! & (1 << (slot & 31))) === 0) continue
    let o = base + w * 4
    let d = v - (sStart + k * size)
    if (o > OFFSET_OVERFLOW || d > OFFSET_OVERFLOW) {
      sink.overflows++
      if (o > OFFSET_OVERFLOW) o = OFFSET_OVERFLOW
      if (d > OFFSET_OVERFLOW) d = OFFSET_OVERFLOW
    }
    const e = sink.count
    if (e === sink.to.length) sink.grow()
    sink.to[e] = slot
    sink.offset[e] = o
    sink.toOffset[e] = d
    sink.count = e + 1
  }
}

function scanRoots(program: Program, t: LiveLookup, warnings: Warnings, ranges: RootRange[], kinds: ReadonlySet<number>): RootBuilder {
  const roots = new RootBuilder()
  const resolver = new LiveResolver(t)
  const memory = program.core.memory
  for (const thread of kinds.has(ROOT_REGISTER) ? program.core.threads : []) {
    for (let r = 0; r < REGISTER_NAMES.length; r++) {
      const value = Number(thread.registers[r]!)
      const slot = resolver.slotOf(value)
      if (slot >= 0) roots.add(ROOT_REGISTER, thread.tid, r, slot, value - resolver.liveStart)
    }
  }
  const buf = Buffer.allocUnsafeSlow(CHUNK)
  const words = new Uint32Array(buf.buffer, buf.byteOffset, CHUNK >>> 2)
  const {lo, hi, loHi, hiHi} = t
  const scanRange = (range: RootRange) => {
    let unreadableBytes = 0
    for (let pos = range.start; pos < range.end; pos += CHUNK) {
      const n = Math.min(CHUNK, range.end - pos)
      if (!memory.readInto(pos, n, buf)) {
        unreadableBytes += readPageByPage(pos, n)
        continue
      }
      scanBuffer(pos, n / 4)
    }
    if (unreadableBytes > 0) {
      warnings.add('roots', `${range.label}: ${unreadableBytes} bytes at ${hex(range.start)}..${hex(range.end)} are not in the core; not scanned`, range.start)
    }

    function scanBuffer(bufAddr: number, wordCount: number) {
      for (let w = 0; w < wordCount; w += 2) {
        const vh = words[w + 1]!
        if (vh < loHi || vh > hiHi) continue
        const v = vh * TWO32 + words[w]!
        if (v < lo || v >= hi) continue
        const slot = resolver.slotOf(v)
        if (slot >= 0) roots.add(range.kind, range.thread, bufAddr + w * 4, slot, v - resolver.liveStart)
      }
    }

    /** A chunk with holes: scan the 4 KiB pages the core has; return bytes it has not. */
    function readPageByPage(pos: number, n: number): number {
      let missing = 0
      const end = pos + n
      for (let p = pos; p < end; ) {
        const q = Math.min(end, (Math.floor(p / CORE_PAGE) + 1) * CORE_PAGE)
        if (memory.readInto(p, q - p, buf)) scanBuffer(p, (q - p) / 4)
        else missing += q - p
        p = q
      }
      return missing
    }
  }
  for (const range of ranges) if (kinds.has(range.kind)) scanRange(range)
  return roots
}
