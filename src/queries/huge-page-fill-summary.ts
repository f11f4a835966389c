import {hex} from '../errors.js'
import type {HugePageFill} from '../heap/heap-model.js'
import {PINNED_SHARE} from './pinned-share.js'

/**
 * The filler's shape as the summary stores it (the index keeps no array of it): how many hugepages,
 * how many are full, partly free, hold released pages; hugepages by pages used, by free pages still
 * backed and by their longest free run (the figures of tcmalloc's fullness histograms); and the
 * hugepages held by a few pages (at most PINNED_SHARE of them in use), by address. Null where the
 * allocator has no filler.
 */
export function hugePageFillSummary(fill: HugePageFill | undefined) {
  if (!fill) return null
  const n = fill.pagesPerHugePage
  const histogram = () => new Array<number>(n + 1).fill(0)
  const byUsedPages = histogram()
  const byFreePages = histogram()
  const byLongestFree = histogram()
  let full = 0
  let released = 0
  let partiallyReleased = 0
  let usedPages = 0
  let freePages = 0
  let releasedPages = 0
  const heldByFew: Array<{start: string; used: number; released: number}> = []
  for (const h of fill.hugePages) {
    // Free pages as tcmalloc counts them (PageTracker::free_pages): free and still backed.
    const free = n - h.used - h.released
    byUsedPages[h.used]!++
    byFreePages[free]!++
    byLongestFree[h.longestFree]!++
    if (h.used === n) full++
    if (h.released > 0) released++
    if (h.released > 0 && free > 0) partiallyReleased++
    usedPages += h.used
    freePages += free
    releasedPages += h.released
    if (h.used <= PINNED_SHARE * n) heldByFew.push({start: hex(h.start), used: h.used, released: h.released})
  }
  const hugePages = fill.hugePages.length
  return {pagesPerHugePage: n, hugePages, full, partial: hugePages - full - released, released, partiallyReleased, usedPages, freePages, releasedPages, byUsedPages, byFreePages, byLongestFree, heldByFew}
}

export type HugePageFillSummary = NonNullable<ReturnType<typeof hugePageFillSummary>>
