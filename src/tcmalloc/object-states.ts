import {hex} from '../errors.js'
import {IN_USE, spanIndexAt} from './span-lookup.js'
import type {SpanTable} from './spans.js'
import type {Warnings} from './warnings.js'

/** Per-object states, one byte per object slot (TOMA's SpanWrapper tags). */
export const LIVE = 0
export const THREAD_CACHE = 1
export const CENTRAL_CACHE = 2
export const TRANSFER_CACHE = 3
export const PAGE_HEAP = 4
export const RETURNED = 5
export const STATE_NAMES = ['live', 'thread-cache', 'central-cache', 'transfer-cache', 'page-heap', 'returned'] as const
export type StateName = (typeof STATE_NAMES)[number]

/**
 * Marks free objects found on TCMalloc's lists. Every entry is checked against the span table
 * before it is trusted: it must start an object of the expected class in an in-use span, and
 * must not already be free (which also catches cycles).
 */
export class StateMarker {
  constructor(
    readonly spans: SpanTable,
    readonly state: Uint8Array,
    readonly pageSize: number,
    readonly warnings: Warnings,
  ) {}

  /** Object index of a free-list entry, or -1 with a warning naming the list. */
  mark(addr: number, sizeClass: number, to: number, list: string, listAddr: number): number {
    const s = spanIndexAt(this.spans, this.pageSize, addr)
    if (s < 0) {
      this.warnings.add('free-list', `${list}: entry ${hex(addr)} is in no span of the page heap`, listAddr, addr)
      return -1
    }
    if (this.spans.location[s] !== IN_USE || this.spans.sizeClass[s] !== sizeClass) {
      this.warnings.add('free-list', `${list}: entry ${hex(addr)} is in span ${hex(this.spans.record[s]!)} of class ${this.spans.sizeClass[s]}, not class ${sizeClass}`, listAddr, addr)
      return -1
    }
    return this.markInSpan(s, addr, to, list, listAddr)
  }

  /** True when addr starts an object of an in-use small span that no list has marked free. */
  isLiveObjectStart(addr: number): boolean {
    const s = spanIndexAt(this.spans, this.pageSize, addr)
    if (s < 0 || this.spans.location[s] !== IN_USE || this.spans.sizeClass[s] === 0) return false
    const k = (addr - this.spans.start[s]!) / this.spans.objectSize[s]!
    return Number.isInteger(k) && k < this.spans.objectCount[s]! && this.state[this.spans.firstObject[s]! + k] === LIVE
  }

  /**
   * The same for an entry that must lie in span s (a span's own free list): no lookup needed.
   * `list` names the list in a warning; a function for a name that costs a string to make (this
   * runs for every free object of the heap, the names only for the rare warning).
   */
  markInSpan(s: number, addr: number, to: number, list: string | (() => string), listAddr: number): number {
    const offset = addr - this.spans.start[s]!
    const size = this.spans.objectSize[s]!
    const k = offset / size
    const name = () => (typeof list === 'string' ? list : list())
    if (!Number.isInteger(k) || k < 0 || k >= this.spans.objectCount[s]!) {
      this.warnings.add('free-list', `${name()}: entry ${hex(addr)} is not the start of an object of span ${hex(this.spans.record[s]!)}`, listAddr, addr)
      return -1
    }
    const index = this.spans.firstObject[s]! + k
    if (this.state[index] !== LIVE) {
      this.warnings.add('free-list', `${name()}: object ${hex(addr)} is already ${STATE_NAMES[this.state[index]!]} (on two lists, or the list has a cycle)`, listAddr, addr)
      return -1
    }
    this.state[index] = to
    return index
  }
}
