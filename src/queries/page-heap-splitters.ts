import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {SPAN_IN_USE} from './memory-accounting.js'
import {objectLabel, objectLabelColumns} from './object-label.js'
import {FREE_NORMAL, FREE_RETURNED} from './page-heap-shape.js'

/** A free run right next to a live span: its pages and the free list it is on. */
export interface FreeNeighbour {
  pages: number
  list: 'normal' | 'returned'
}

/** A live span between two free runs of the page heap: freeing it would join them. */
export interface Splitter {
  address: string
  pages: number
  /** The span's object when it holds one (a large block), else what its slots are. */
  name: string
  holder: string | null
  before: FreeNeighbour
  after: FreeNeighbour
  /** Pages of the run its freeing makes in gperftools as it runs by default: it goes on the normal list and joins only normal neighbours. */
  joinedPages: number
  /** Pages of the whole free stretch (it and both neighbours): the run made when decommit is aggressive, where a returned neighbour joins too. */
  stretchPages: number
}

/**
 * Live spans that split free runs: every in-use span whose neighbours on both sides (adjacent
 * pages) are free spans of the page heap, with the run its freeing would make. gperftools only
 * (one page heap). PageHeap::Delete puts the freed span on the normal list; MergeIntoFreeList's
 * CheckAndHandlePreMerge (2.10, the fixtures' build) joins a neighbour only on the same list
 * unless aggressive_decommit_ is on (2.4 and 2.5's default): then the span is decommitted and a
 * normal neighbour with it, so every free neighbour joins. Some releases' MergeIntoFreeList
 * ("always decommit") joins every free neighbour too; which releases was not checked here, and
 * the model does not read aggressive_decommit_, so both runs are given. Null for google/tcmalloc:
 * its huge-page allocator's free pages are not all spans of the index, so a neighbour is not
 * known to be the whole free run. Largest joined run first, at most `rows`.
 */
export function pageHeapSplitters(index: HeapIndex, rows: number): {count: number; spans: Splitter[]} | null {
  if (index.meta.summary.allocator.kind !== 'gperftools') return null
  const {spanStart, spanPages, spanLocation, spanSizeClass, spanFirstObject, spanObjectCount, spanObjectSize} = index
  const page = index.pageSize
  const labels = objectLabelColumns(index)
  const adjacent = (a: number, b: number) => spanStart[a]! + spanPages[a]! * page === spanStart[b]!
  const freeRun = (s: number): FreeNeighbour | null => {
    const loc = spanLocation[s]
    return loc === FREE_NORMAL || loc === FREE_RETURNED ? {pages: spanPages[s]!, list: loc === FREE_NORMAL ? 'normal' : 'returned'} : null
  }
  const found: Splitter[] = []
  for (let s = 1; s + 1 < spanStart.length; s++) {
    if (spanLocation[s] !== SPAN_IN_USE || !adjacent(s - 1, s) || !adjacent(s, s + 1)) continue
    const before = freeRun(s - 1)
    const after = freeRun(s + 1)
    if (!before || !after) continue
    const pages = spanPages[s]!
    const cl = spanSizeClass[s]!
    const label = spanObjectCount[s] === 1 && cl === 0
      ? objectLabel(index, labels.types(), labels.holders(), spanFirstObject[s]!, spanObjectSize[s]!)
      : {name: `(span of size class ${cl}: ${spanObjectCount[s]} slots of ${spanObjectSize[s]} B)`, holder: null}
    const normal = (n: FreeNeighbour) => (n.list === 'normal' ? n.pages : 0)
    found.push({address: hex(spanStart[s]!), pages, ...label, before, after,
      joinedPages: pages + normal(before) + normal(after), stretchPages: pages + before.pages + after.pages})
  }
  found.sort((a, b) => b.joinedPages - a.joinedPages || b.stretchPages - a.stretchPages)
  return {count: found.length, spans: found.slice(0, rows)}
}
