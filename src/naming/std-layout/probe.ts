import type {ObjectRef} from '../../heap/objects.js'
import type {NamingContext} from '../recogniser.js'
import {VIA_LAYOUT} from '../via.js'
import {PAGE_SPAN_STRIDE, setPageSpan, spansFit32} from '../../graph/live-lookup.js'

/** A live block a layout test found: its slot, address and size. */
export type Block = Pick<ObjectRef, 'index' | 'start' | 'size'>

/**
 * What the layout tests read and how they name: words of the process image (untrusted, undefined
 * where the core has none) and the live, still unnamed blocks that start at an address.
 *
 * The owner being read (an object or a root range) is at hand in `words` (from `wordsStart`), so
 * the owner-side checks, which every test makes first and which reject almost every word, cost no
 * read of the core; only what passes them reads the blocks pointed at.
 */
export class Probe {
  /** The object or root range whose words are being read: a container lies wholly inside it. */
  ownerStart = 0
  ownerEnd = 0
  /** Words already read around the owner, as 32-bit halves, and the address of words[0]. */
  words: Uint32Array | null = null
  wordsStart = 0
  /** Past the last byte offset from wordsStart at which a whole word is in `words` (0: none). */
  private wordsLimit = 0

  /**
   * Per page of the heap's range, PAGE_SPAN_STRIDE numbers (the scan's pageSpans, live-lookup.ts): its span's first slot, object size, first
   * page (counted from lo) and object count; size 0 for a page no span holds. Null when the range
   * is too large, a span's numbers do not fit 32 bits or a span does not start a page: then a binary
   * search and the span table.
   */
  private readonly pageSlots: Uint32Array | null
  private readonly pages: number
  private readonly lo: number
  private readonly pageSize: number
  /** The slots' states (fixed while naming; read once, not through the objects' getter per word). */
  private readonly state: Uint8Array

  constructor(readonly ctx: NamingContext) {
    const {spans, pageSize} = ctx.objects
    this.pageSize = pageSize
    this.state = ctx.objects.state
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
    // Every word of every owner that points into the heap asks for its block: a table of the
    // heap's pages (16 bytes a page: 4 MiB for 2 GiB of 8 KiB pages) answers with one read where the
    // span table took five (the page's span, then four arrays by span), each missing the cache once
    // the heap is large.
    const small = pages <= MAX_PAGE_TABLE && (pages - spanned) * PAGE_SPAN_STRIDE * 4 <= MAX_TABLE_WASTE
    this.pageSlots = pages > 0 && small && spansFit32(spans, lo, pageSize) ? new Uint32Array(pages * PAGE_SPAN_STRIDE) : null
    if (this.pageSlots) {
      for (let i = 0; i < spans.start.length; i++) {
        const first = (spans.start[i]! - lo) / pageSize
        for (let page = first; page < first + spans.pages[i]!; page++) setPageSpan(this.pageSlots, page, spans, i, first)
      }
    }
  }

  /** Whether [from, to) lies inside the current owner (a layout read past it is not the owner's). */
  holds(from: number, to: number): boolean {
    return from >= this.ownerStart && to <= this.ownerEnd
  }

  /** Reads from here on come from `bytes` (what the core holds at `start`, 8-aligned) where they can. */
  useBytes(bytes: Buffer, start: number): void {
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4))
    this.wordsStart = start
    this.wordsLimit = this.words.length * 4 - 4
  }

  /** Reads from here on come from the core. */
  useNoBytes(): void {
    this.words = null
    this.wordsLimit = 0
  }

  // word and u32 run for every word of every owner that points into the heap, several times each:
  // the offset is tested in integer arithmetic (it is below wordsLimit, at most a read's
  // SLOT_CHUNK, before `& 3` looks at it), not by a division and Number.isInteger: a script that
  // models the bench core's heap and runs this tier took 0.88 of the time (BENCHMARKS.md, issue 33).
  word(addr: number): number | undefined {
    const off = addr - this.wordsStart
    if (off >= 0 && off < this.wordsLimit && (off & 3) === 0) {
      const w = this.words!
      const i = off >>> 2
      return w[i]! + w[i + 1]! * 0x1_0000_0000
    }
    return this.ctx.program.core.memory.readU64(addr)
  }

  /** The low 32 bits of a word (an int field, such as an rb-tree node's colour). */
  u32(addr: number): number | undefined {
    const off = addr - this.wordsStart
    if (off >= 0 && off < this.wordsLimit + 4 && (off & 3) === 0) return this.words![off >>> 2]!
    return this.ctx.program.core.memory.readU32(addr)
  }

  /**
   * The live slot that starts exactly at addr and has no name yet (or, given `kind`, a name of that
   * kind: another tier, debug information, may have named some of a container's blocks first),
   * else undefined.
   */
  block(addr: number | undefined, kind?: string): Block | undefined {
    const slot = this.liveSlot(addr)
    if (slot === undefined) return undefined
    const names = this.ctx.names
    if (names.typeOf[slot.index] !== 0 && (kind === undefined || names.kindOf(slot.index) !== kind)) return undefined
    return slot
  }

  /** The live slot that starts exactly at addr, named or not, else undefined. */
  liveSlot(addr: number | undefined): Block | undefined {
    if (addr === undefined || addr % 8 !== 0 || addr <= 0) return undefined
    // Every word of every owner is asked: the slot is worked out here without an object per word.
    let index: number
    let size: number
    const table = this.pageSlots
    if (table !== null) {
      const page = Math.floor((addr - this.lo) / this.pageSize)
      if (!(page >= 0 && page < this.pages)) return undefined
      const at = page * PAGE_SPAN_STRIDE
      size = table[at + 1]!
      if (size === 0) return undefined
      const k = (addr - (this.lo + table[at + 2]! * this.pageSize)) / size
      if (!Number.isInteger(k) || k >= table[at + 3]!) return undefined
      index = table[at]! + k
    } else {
      const spans = this.ctx.objects.spans
      const span = this.ctx.objects.spanAt(addr)
      if (span < 0) return undefined
      size = spans.objectSize[span]!
      const k = (addr - spans.start[span]!) / size
      if (!Number.isInteger(k) || k >= spans.objectCount[span]!) return undefined
      index = spans.firstObject[span]! + k
    }
    if (this.state[index] !== this.ctx.live) return undefined
    return {index, start: addr, size}
  }

  /** Whether the allocator gives a block of this size for this request. */
  fits(request: number, block: Block): boolean {
    return this.ctx.fits(request, block.size)
  }

  name(block: Block, name: string, kind: string = name): void {
    this.ctx.names.assign(block.index, name, kind, VIA_LAYOUT, block.start)
  }
}

/** Most heap pages the probe's page table covers (512 GiB of 8 KiB pages). */
const MAX_PAGE_TABLE = 1 << 24
/** Bytes of the page table that may cover pages no span holds (spans scattered over a wide range). */
const MAX_TABLE_WASTE = 64 * 1024 * 1024

/** Longest walk of one container (nodes, blocks, buckets): past it the owner is taken as not one. */
export const MAX_ELEMENTS = 1 << 24
