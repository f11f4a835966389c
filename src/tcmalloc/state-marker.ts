import {spanIndexAt} from '../heap/slot-table.js'
import {LIVE} from '../heap/states.js'
import {IN_USE, type SpanTable} from './spans.js'

/** Why an address is not a free entry of a list (StateMarker.check's negative answers). */
export const NOT_IN_HEAP = -1
export const OTHER_CLASS = -2
export const NOT_OBJECT_START = -3
export const ALREADY_FREE = -4

/**
 * Marks free objects found on TCMalloc's lists. Every entry is checked against the span table
 * before it is trusted: it must start an object of the expected class in an in-use span, and
 * must not already be free (which also catches cycles). The list walk (free-list-walk.ts) says
 * what a failed check means for its list.
 */
export class StateMarker {
  /** The span of the address last checked (−1 when in none): for the walk's messages. */
  lastSpan = -1

  constructor(
    readonly spans: SpanTable,
    readonly state: Uint8Array,
    readonly pageSize: number,
    /** Each slot's first word, read before the walks (NaN: not read); the link of a free object. */
    readonly firstWords: Float64Array | null = null,
  ) {}

  /**
   * The slot index of a free entry at addr, of class sizeClass (in span `inSpan` when that is
   * known, ≥ 0: a span's own free list), or why it is none: NOT_IN_HEAP, OTHER_CLASS,
   * NOT_OBJECT_START, ALREADY_FREE.
   */
  check(addr: number, sizeClass: number, inSpan = -1): number {
    const s = inSpan >= 0 ? inSpan : spanIndexAt(this.spans, this.pageSize, addr)
    this.lastSpan = s
    if (s < 0) return NOT_IN_HEAP
    const offset = addr - this.spans.start[s]!
    if (inSpan >= 0 && (offset < 0 || offset >= this.spans.pages[s]! * this.pageSize)) {
      this.lastSpan = spanIndexAt(this.spans, this.pageSize, addr)
      return this.lastSpan < 0 ? NOT_IN_HEAP : OTHER_CLASS
    }
    if (this.spans.location[s] !== IN_USE || this.spans.sizeClass[s] !== sizeClass) return OTHER_CLASS
    const k = offset / this.spans.objectSize[s]!
    if (!Number.isInteger(k) || k >= this.spans.objectCount[s]!) return NOT_OBJECT_START
    const index = this.spans.firstObject[s]! + k
    return this.state[index] !== LIVE ? ALREADY_FREE : index
  }

  /** The slot holding addr in the span last checked (an entry that is no object start). */
  slotAt(addr: number): number {
    const s = this.lastSpan
    if (s < 0) return -1
    const k = Math.floor((addr - this.spans.start[s]!) / this.spans.objectSize[s]!)
    return k >= 0 && k < this.spans.objectCount[s]! ? this.spans.firstObject[s]! + k : -1
  }

  /** The object start of a slot of the span last checked. */
  slotStart(index: number): number {
    const s = this.lastSpan
    return this.spans.start[s]! + (index - this.spans.firstObject[s]!) * this.spans.objectSize[s]!
  }

  mark(index: number, to: number): void {
    this.state[index] = to
  }

  /** True when addr starts an object of an in-use small span that no list has marked free. */
  isLiveObjectStart(addr: number): boolean {
    const s = spanIndexAt(this.spans, this.pageSize, addr)
    if (s < 0 || this.spans.location[s] !== IN_USE || this.spans.sizeClass[s] === 0) return false
    const k = (addr - this.spans.start[s]!) / this.spans.objectSize[s]!
    return Number.isInteger(k) && k < this.spans.objectCount[s]! && this.state[this.spans.firstObject[s]! + k] === LIVE
  }
}
