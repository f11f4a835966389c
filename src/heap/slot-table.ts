import {lastAtOrBelow} from '../util/search.js'

/**
 * The slot table: every span of the heap in address order, as parallel arrays (a span is an
 * index). Each span owns a run of object slots [firstObject, firstObject + objectCount) in the
 * heap's state array: one slot per object of a span cut into objects, one for a large or free span.
 * The heap model and the index both have these arrays; iteration and lookup (objects.ts) need no more.
 */
export interface SpanObjectArrays {
  start: Float64Array
  pages: Float64Array
  /** Bytes of one object: the class size, or the whole span. */
  objectSize: Float64Array
  firstObject: Float64Array
  objectCount: Float64Array
}

/** The slot table as a heap model holds it: the arrays with their span and slot counts. */
export interface SlotTable extends SpanObjectArrays {
  count: number
  totalObjects: number
}

/** Index of the span whose memory contains addr, or -1 (apart from objects.ts so that allocator models use it alone). */
export function spanIndexAt(spans: {start: ArrayLike<number>; pages: ArrayLike<number>}, pageSize: number, addr: number): number {
  const s = lastAtOrBelow(spans.start, addr)
  return s >= 0 && addr < spans.start[s]! + spans.pages[s]! * pageSize ? s : -1
}
