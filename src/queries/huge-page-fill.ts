import {LIVE} from '../heap/states.js'
import type {HeapIndex} from '../index/heap-index.js'
import {SPAN_IN_USE} from './memory-accounting.js'
import {objectLabel, objectLabelColumns} from './object-label.js'
import type {HugePageFillSummary} from './huge-page-fill-summary.js'
import {PINNED_SHARE} from './pinned-share.js'

/** Names listed for a hugepage held by a few pages: the ones with the most bytes. */
const NAMES_PER_HUGEPAGE = 3

/** What holds a hugepage of the filler that a few pages keep: its spans in use (a large one may start before it) and their live objects, by name. */
export interface HeldHugePage {
  start: string
  usedPages: number
  spans: number
  liveObjects: number
  liveBytes: number
  names: Array<{name: string; holder: string | null; objects: number; bytes: number}>
}

/**
 * The filler's shape for `toma memory` (issue 53): the summary's figures, and for each hugepage a
 * few pages hold, the spans in use in it and the live objects that keep them (from the index: the
 * span table in address order, the slot states, names and holders). Null without a filler, or for
 * an index made before the summary kept it.
 */
export function hugePageFillReport(index: HeapIndex) {
  const fill = (index.meta.summary as {hugePageFill?: HugePageFillSummary | null}).hugePageFill ?? null
  if (!fill) return null
  const {spanStart, spanPages, spanLocation, spanFirstObject, spanObjectCount, spanObjectSize} = index
  const state = index.objects.state
  const labels = objectLabelColumns(index)
  const hugePageBytes = fill.pagesPerHugePage * index.pageSize
  const held: HeldHugePage[] = fill.heldByFew.map(h => {
    const start = Number(h.start)
    const out: HeldHugePage = {start: h.start, usedPages: h.used, spans: 0, liveObjects: 0, liveBytes: 0, names: []}
    const names = new Map<string, HeldHugePage['names'][number]>()
    // A donated hugepage's used pages are the tail of a large span that starts before it.
    let s = firstSpanFrom(spanStart, start)
    if (s > 0 && spanStart[s - 1]! + spanPages[s - 1]! * index.pageSize > start) s--
    for (; s < spanStart.length && spanStart[s]! < start + hugePageBytes; s++) {
      if (spanLocation[s] !== SPAN_IN_USE) continue
      out.spans++
      const size = spanObjectSize[s]!
      for (let id = spanFirstObject[s]!, end = id + spanObjectCount[s]!; id < end; id++) {
        if (state[id] !== LIVE) continue
        const label = objectLabel(index, labels.types(), labels.holders(), id, size)
        const key = `${label.name}\u0000${label.holder ?? ''}`
        let g = names.get(key)
        if (!g) names.set(key, (g = {...label, objects: 0, bytes: 0}))
        g.objects++
        g.bytes += size
        out.liveObjects++
        out.liveBytes += size
      }
    }
    out.names = [...names.values()].sort((a, b) => b.bytes - a.bytes).slice(0, NAMES_PER_HUGEPAGE)
    return out
  })
  return {...fill, heldShare: PINNED_SHARE, heldByFew: held}
}

/** The first span starting at or after `address` (spans in address order). */
function firstSpanFrom(spanStart: ArrayLike<number>, address: number): number {
  let lo = 0
  let hi = spanStart.length
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if (spanStart[mid]! < address) lo = mid + 1
    else hi = mid
  }
  return lo
}
