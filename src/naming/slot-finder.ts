import type {HeapObjects} from '../heap/objects.js'
import {PAGE_SPAN_STRIDE, setPageSpan, spansFit32} from '../graph/live-lookup.js'

/** Most heap pages the page table covers (512 GiB of 8 KiB pages). */
const MAX_PAGE_TABLE = 1 << 24
/** Bytes of the page table that may cover pages no span holds (spans scattered over a wide range). */
const MAX_TABLE_WASTE = 64 * 1024 * 1024

/**
 * The object slot holding an address, for the naming tiers that ask it of every pointer they meet
 * (the layout tier of every owner word, the DWARF tier of every typed pointer): `find` sets
 * `index`, `start` and `size` instead of making an object per address, and answers from a table of
 * the heap's pages (the scan's pageSpans, live-lookup.ts: per page its span's first slot, object
 * size, first page counted from lo and object count, 16 bytes a page: 4 MiB for 2 GiB of 8 KiB
 * pages) with one read where the span table took a binary search and four arrays by span, each
 * missing the cache once the heap is large. Without the table (too large a range, a span's numbers
 * past 32 bits, a span that does not start a page), the span table is searched.
 */
export class SlotFinder {
  /** The slot `find` found last: its id, first byte and size. */
  index = -1
  start = 0
  size = 0

  private readonly pageSlots: Uint32Array | null
  private readonly pages: number
  private readonly lo: number
  private readonly pageSize: number

  constructor(private readonly objects: HeapObjects) {
    const {spans, pageSize} = objects
    this.pageSize = pageSize
    let lo = Infinity
    let hi = 0
    let spanned = 0
    for (let i = 0; i < spans.start.length; i++) {
      lo = Math.min(lo, spans.start[i]!)
      hi = Math.max(hi, spans.start[i]! + spans.pages[i]! * pageSize)
      spanned += spans.pages[i]!
    }
    this.lo = lo
    const pages = lo < hi ? (hi - lo) / pageSize : 0
    this.pages = pages
    const small = pages <= MAX_PAGE_TABLE && (pages - spanned) * PAGE_SPAN_STRIDE * 4 <= MAX_TABLE_WASTE
    this.pageSlots = pages > 0 && small && spansFit32(spans, lo, pageSize) ? new Uint32Array(pages * PAGE_SPAN_STRIDE) : null
    if (this.pageSlots) {
      for (let i = 0; i < spans.start.length; i++) {
        const first = (spans.start[i]! - lo) / pageSize
        for (let page = first; page < first + spans.pages[i]!; page++) setPageSpan(this.pageSlots, page, spans, i, first)
      }
    }
  }

  /** Whether a slot (of any state) holds `addr`: then `index`, `start` and `size` are its. False outside every span and in a span's tail waste. */
  find(addr: number): boolean {
    const table = this.pageSlots
    let first: number
    let base: number
    let size: number
    let count: number
    if (table !== null) {
      const page = Math.floor((addr - this.lo) / this.pageSize)
      if (!(page >= 0 && page < this.pages)) return false
      const at = page * PAGE_SPAN_STRIDE
      size = table[at + 1]!
      if (size === 0) return false
      first = table[at]!
      base = this.lo + table[at + 2]! * this.pageSize
      count = table[at + 3]!
    } else {
      const span = this.objects.spanAt(addr)
      if (span < 0) return false
      const spans = this.objects.spans
      size = spans.objectSize[span]!
      first = spans.firstObject[span]!
      base = spans.start[span]!
      count = spans.objectCount[span]!
    }
    const k = Math.floor((addr - base) / size)
    if (k >= count) return false
    this.index = first + k
    this.start = base + k * size
    this.size = size
    return true
  }
}
