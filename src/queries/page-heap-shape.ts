import type {HeapIndex} from '../index/heap-index.js'

/** The index's span.location of a free span: on the normal free list, or returned to the system. */
export const FREE_NORMAL = 1
export const FREE_RETURNED = 2

export interface FreeRunLength {
  pages: number
  normal: number
  returned: number
}

/**
 * The page heap's free runs (free spans) by length, normal and returned, the largest, and the
 * largest request the heap can serve without growing: one free span's bytes, since the allocator
 * never joins two spans for one request (adjacent free spans are already one, or kept apart by it).
 */
export function pageHeapShape(index: HeapIndex) {
  const {spanLocation, spanPages} = index
  const byLength = new Map<number, FreeRunLength>()
  let normalBytes = 0
  let returnedBytes = 0
  let largestPages = 0
  for (let s = 0; s < spanLocation.length; s++) {
    const loc = spanLocation[s]!
    if (loc !== FREE_NORMAL && loc !== FREE_RETURNED) continue
    const pages = spanPages[s]!
    let e = byLength.get(pages)
    if (!e) byLength.set(pages, (e = {pages, normal: 0, returned: 0}))
    if (loc === FREE_NORMAL) {
      e.normal++
      normalBytes += pages * index.pageSize
    } else {
      e.returned++
      returnedBytes += pages * index.pageSize
    }
    largestPages = Math.max(largestPages, pages)
  }
  return {
    pageSize: index.pageSize,
    runs: [...byLength.values()].sort((a, b) => a.pages - b.pages),
    normalBytes,
    returnedBytes,
    largestRunPages: largestPages,
    /** Bytes of the largest request served from free runs alone (a returned run is taken back from the system first). */
    largestServableBytes: largestPages * index.pageSize,
  }
}
