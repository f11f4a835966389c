import {lastAtOrBelow} from '../util/search.js'

/**
 * A span's place in the page heap and the span at an address: apart from spans.ts (which reads
 * spans from the core, with its struct layouts) so that a query of an index loads neither.
 */
export const IN_USE = 0
export const ON_NORMAL_FREELIST = 1
export const ON_RETURNED_FREELIST = 2

/** Index of the span whose memory contains addr, or -1. */
export function spanIndexAt(spans: {start: ArrayLike<number>; pages: ArrayLike<number>}, pageSize: number, addr: number): number {
  const s = lastAtOrBelow(spans.start, addr)
  return s >= 0 && addr < spans.start[s]! + spans.pages[s]! * pageSize ? s : -1
}
