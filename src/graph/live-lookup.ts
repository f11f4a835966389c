import type {HeapModel} from '../heap/heap-model.js'
import {LIVE} from '../heap/states.js'
import type {SpanObjectArrays} from '../heap/slot-table.js'
import {lastAtOrBelow} from '../util/search.js'

/** Most pages a leaf of the page → span table covers (4096 pages: 32 MiB with 8 KiB pages). */
const MIN_CHUNK_BITS = 12
/** The root table never has more entries than this (16 MiB of Int32Array). */
const MAX_ROOT_ENTRIES = 1 << 22

/**
 * Address → span lookup for the pointer scan, built once from the span table: a two-level page
 * table (root by chunk of pages, dense Int32Array leaves only for chunks that spans touch) over
 * [lowest span start, highest span end). It is typed arrays only, so the scan loop can inline it.
 *
 * `lo`/`hi` bound every span; `loHi`/`hiHi` are the same bounds' upper 32 bits, for rejecting a
 * word on its high half before building a double. When the leaves would be unreasonably large
 * (spans scattered over many chunks) `root` is null and callers binary-search `spanStart`.
 */
export interface PointerLookup {
  lo: number
  hi: number
  loHi: number
  hiHi: number
  /** 1 / pageSize (exact: pageSize is a power of two). */
  invPage: number
  chunkBits: number
  chunkPages: number
  /** Chunk (relative to lo) → leaf number, or −1. */
  root: Int32Array | null
  /** leaf * chunkPages + page-in-chunk → span index, or −1. */
  leaves: Int32Array
  /**
   * The same pages' spans' facts, PAGE_SPAN_STRIDE 32-bit numbers a page: the span's first object
   * slot, object size, first page (counted from lo) and object count; size 0 for a page no span
   * holds. The scan resolves a pointer with this one random read where leaves and then spanInfo
   * take two, from a table half spanInfo's size a page (its loads miss the cache, its arithmetic
   * does not). Empty without a page table (root null), when a span's numbers do not fit 32 bits,
   * or when the spans are so scattered that it would exceed PAGE_SPAN_SLACK_BYTES beyond their own
   * pages (the scan then reads leaves, then spanInfo).
   */
  pageSpans: Uint32Array
  spanStart: Float64Array
  /** End of each span's object area: start + objectCount * objectSize (tail waste excluded). */
  spanObjectsEnd: Float64Array
  /**
   * The same per-span facts interleaved, SPAN_STRIDE numbers per span (start, objects end, object
   * size, first object slot), so that resolving a pointer touches one cache line, not four.
   */
  spanInfo: Float64Array
  objectSize: Float64Array
  firstObject: Float64Array
  /**
   * Bit per object slot, set when LIVE: 8× denser than the state array, so the scan's check misses
   * cache less. Not shared: loads from a SharedArrayBuffer measured slower in the scan loop, and a
   * worker's copy is only an eighth of a byte per slot.
   */
  liveBits: Uint32Array
}

/** The lookup with the heap's state array (what resolving a single address needs). */
export interface LiveLookup extends PointerLookup {
  state: Uint8Array
}

export const SPAN_STRIDE = 4

/** Leaves may use this many bytes beyond 4 bytes per spanned page before we give up on the table. */
const LEAF_SLACK_BYTES = 256 * 1024 * 1024
export const PAGE_SPAN_STRIDE = 4
/** pageSpans may use this many bytes beyond its share of the spanned pages (each scan thread has a copy). */
const PAGE_SPAN_SLACK_BYTES = 32 * 1024 * 1024

export function buildLiveLookup(heap: Pick<HeapModel, 'spans' | 'pageSize' | 'state'>): LiveLookup {
  const spans = heap.spans
  const pageSize = heap.pageSize
  const invPage = 1 / pageSize
  const n = spans.count
  const spanObjectsEnd = new Float64Array(n)
  const spanInfo = new Float64Array(n * SPAN_STRIDE)
  for (let s = 0; s < n; s++) {
    spanObjectsEnd[s] = spans.start[s]! + spans.objectCount[s]! * spans.objectSize[s]!
    spanInfo[s * SPAN_STRIDE] = spans.start[s]!
    spanInfo[s * SPAN_STRIDE + 1] = spanObjectsEnd[s]!
    spanInfo[s * SPAN_STRIDE + 2] = spans.objectSize[s]!
    spanInfo[s * SPAN_STRIDE + 3] = spans.firstObject[s]!
  }
  let lo = Infinity
  let hi = -Infinity
  for (let s = 0; s < n; s++) {
    lo = Math.min(lo, spans.start[s]!)
    hi = Math.max(hi, spans.start[s]! + spans.pages[s]! * pageSize)
  }
  if (n === 0) {
    lo = 0
    hi = 0
  }
  const base = {
    lo,
    hi,
    loHi: Math.floor(lo / 0x1_0000_0000),
    hiHi: Math.floor(Math.max(lo, hi - 1) / 0x1_0000_0000),
    invPage,
    spanStart: spans.start,
    spanObjectsEnd,
    spanInfo,
    objectSize: spans.objectSize,
    firstObject: spans.firstObject,
    state: heap.state,
    liveBits: liveBitsOf(heap.state),
  }
  const rangePages = Math.ceil((hi - lo) * invPage)
  let chunkBits = MIN_CHUNK_BITS
  while (Math.ceil(rangePages / 2 ** chunkBits) > MAX_ROOT_ENTRIES) chunkBits++
  const chunkPages = 2 ** chunkBits
  const rootEntries = Math.max(1, Math.ceil(rangePages / chunkPages))
  const root = new Int32Array(rootEntries).fill(-1)
  let leafCount = 0
  let spannedPages = 0
  for (let s = 0; s < n; s++) {
    const first = Math.floor((spans.start[s]! - lo) * invPage)
    const last = first + spans.pages[s]! - 1
    spannedPages += spans.pages[s]!
    for (let c = Math.floor(first / chunkPages); c <= Math.floor(last / chunkPages); c++) {
      if (root[c] === -1) root[c] = leafCount++
    }
  }
  const leafBytes = leafCount * chunkPages * 4
  if (leafBytes > spannedPages * 4 + LEAF_SLACK_BYTES) {
    return {...base, chunkBits, chunkPages, root: null, leaves: new Int32Array(0), pageSpans: new Uint32Array(0)}
  }
  const leaves = new Int32Array(leafCount * chunkPages).fill(-1)
  const pageSpanBytes = leafCount * chunkPages * PAGE_SPAN_STRIDE * 4
  const fits = pageSpanBytes <= spannedPages * PAGE_SPAN_STRIDE * 4 + PAGE_SPAN_SLACK_BYTES && spansFit32(spans, lo, pageSize)
  const pageSpans = new Uint32Array(fits ? leafCount * chunkPages * PAGE_SPAN_STRIDE : 0)
  for (let s = 0; s < n; s++) {
    const first = Math.floor((spans.start[s]! - lo) * invPage)
    const count = spans.pages[s]!
    for (let p = first; p < first + count; p++) {
      const c = Math.floor(p / chunkPages)
      const at = root[c]! * chunkPages + (p - c * chunkPages)
      leaves[at] = s
      if (fits) setPageSpan(pageSpans, at, spans, s, first)
    }
  }
  return {...base, chunkBits, chunkPages, root, leaves, pageSpans}
}

/**
 * Whether every span's facts fit a per-page table of PAGE_SPAN_STRIDE 32-bit numbers (setPageSpan):
 * its slots, size and first page (from lo), and its start a page's, as a lookup finds it again
 * from its first page.
 */
export function spansFit32(spans: SpanObjectArrays, lo: number, pageSize: number): boolean {
  const MAX = 0xffff_ffff
  for (let s = 0; s < spans.start.length; s++) {
    if (spans.firstObject[s]! + spans.objectCount[s]! > MAX || !(spans.objectSize[s]! >= 1 && spans.objectSize[s]! <= MAX)) return false
    if (spans.start[s]! % pageSize !== 0 || (spans.start[s]! - lo) / pageSize + spans.pages[s]! > MAX) return false
  }
  return true
}

/** Entry `at` of a per-page table: span s's first slot, object size, first page (from lo) and object count. */
export function setPageSpan(table: Uint32Array, at: number, spans: SpanObjectArrays, s: number, firstPage: number): void {
  table[at * PAGE_SPAN_STRIDE] = spans.firstObject[s]!
  table[at * PAGE_SPAN_STRIDE + 1] = spans.objectSize[s]!
  table[at * PAGE_SPAN_STRIDE + 2] = firstPage
  table[at * PAGE_SPAN_STRIDE + 3] = spans.objectCount[s]!
}

function liveBitsOf(state: Uint8Array): Uint32Array {
  const bits = new Uint32Array((state.length + 31) >>> 5)
  for (let i = 0; i < state.length; i++) if (state[i] === LIVE) bits[i >>> 5]! |= 1 << (i & 31)
  return bits
}

/** Span index whose page range holds addr (lo ≤ addr < hi assumed), or −1. */
export function spanOf(t: PointerLookup, addr: number): number {
  if (t.root !== null) {
    const page = Math.floor((addr - t.lo) * t.invPage)
    const chunk = Math.floor(page / t.chunkPages)
    const leaf = t.root[chunk]!
    return leaf < 0 ? -1 : t.leaves[leaf * t.chunkPages + (page - chunk * t.chunkPages)]!
  }
  return lastAtOrBelow(t.spanStart, addr)
}

/**
 * The live object slot holding addr, or −1 (outside every span, in a span's tail waste, or in a
 * slot that is not live). The object's start is `liveStart` afterwards (no allocation per call).
 */
export class LiveResolver {
  /** Start address of the object found by the last successful `slotOf`. */
  liveStart = 0

  constructor(readonly t: LiveLookup) {}

  slotOf(addr: number): number {
    const t = this.t
    if (!(addr >= t.lo && addr < t.hi)) return -1
    const s = spanOf(t, addr)
    if (s < 0 || addr >= t.spanObjectsEnd[s]!) return -1
    const start = t.spanStart[s]!
    const size = t.objectSize[s]!
    const k = Math.floor((addr - start) / size)
    const slot = t.firstObject[s]! + k
    if (t.state[slot] !== LIVE) return -1
    this.liveStart = start + k * size
    return slot
  }
}
