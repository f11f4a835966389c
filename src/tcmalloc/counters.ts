import {readCounter} from '../core/words.js'
import type {AddressSpace} from '../core/address-space.js'
import type {CentralCounters} from './central-cache.js'
import type {Layout} from './layout.js'
import {CENTRAL_CACHE, LIVE, PAGE_HEAP, RETURNED, THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import type {CrossCheck, StateTotals} from '../heap/heap-model.js'
import type {SizeClasses} from './size-map.js'
import {IN_USE, ON_NORMAL_FREELIST, ON_RETURNED_FREELIST, type SpanTable} from './spans.js'
import type {ThreadCacheInfo} from './thread-caches.js'

/** Per state, and the tail bytes of small-object spans that fit no object (TCMalloc counts them as central-cache free). */
export function stateTotals(spans: SpanTable, state: Uint8Array, pageSize: number): StateTotals {
  const objects = new Float64Array(6)
  const bytes = new Float64Array(6)
  let spanWaste = 0
  for (let s = 0; s < spans.count; s++) {
    if (spans.location[s] === IN_USE && spans.sizeClass[s]! > 0) spanWaste += spans.pages[s]! * pageSize - spans.objectCount[s]! * spans.objectSize[s]!
  }
  // Span by span, with no call a slot (every slot of the heap, before the first answer).
  for (let s = 0; s < spans.count; s++) {
    const size = spans.objectSize[s]!
    for (let id = spans.firstObject[s]!, end = id + spans.objectCount[s]!; id < end; id++) {
      const st = state[id]!
      objects[st]!++
      bytes[st]! += size
    }
  }
  return {objects, bytes, spanWaste}
}

/**
 * TCMalloc's figures computed the way TCMalloc computes them (PageHeap::Stats, CentralFreeList
 * counter_/num_spans_/used_slots_, ThreadCache size_), beside toma's counts of the same: each
 * line's property is the MallocExtension property that reports the figure.
 */
export function crossCheck(
  memory: AddressSpace,
  pageHeap: number,
  layout: Layout,
  sizes: SizeClasses,
  central: CentralCounters,
  caches: ThreadCacheInfo[],
  spans: SpanTable,
  totals: StateTotals,
  threadCachesWalked: boolean,
): CrossCheck[] {
  const st = pageHeap + layout.pageHeap.stats
  const system = readCounter(memory, st + layout.stats.systemBytes) ?? NaN
  const free = readCounter(memory, st + layout.stats.freeBytes) ?? NaN
  const unmapped = readCounter(memory, st + layout.stats.unmappedBytes) ?? NaN
  let centralBytes = 0
  let transferBytes = 0
  for (let cl = 1; cl < sizes.count; cl++) {
    const size = sizes.size[cl]!
    centralBytes += size * central.counter[cl]! + central.numSpans[cl]! * ((sizes.pages[cl]! * layout.pageSize) % size)
    transferBytes += size * Math.max(0, central.usedSlots[cl]!) * sizes.objectsToMove[cl]!
  }
  const threadBytes = caches.reduce((a, c) => a + c.bytes, 0)
  let spanBytes = 0
  let normalBytes = 0
  let returnedBytes = 0
  for (let s = 0; s < spans.count; s++) {
    const b = spans.pages[s]! * layout.pageSize
    spanBytes += b
    if (spans.location[s] === ON_NORMAL_FREELIST) normalBytes += b
    if (spans.location[s] === ON_RETURNED_FREELIST) returnedBytes += b
  }
  const b = totals.bytes
  // Without the thread-cache list both sides of these lines lack the same objects: toma counts them
  // as live, and TCMalloc's figure is computed from the same (empty) list.
  const noCaches = threadCachesWalked ? {} : {notIndependent: 'ThreadCache::thread_heaps_ not found: both figures come from the same missing walk'}
  return [
    {name: 'in use by application', property: 'generic.current_allocated_bytes', toma: b[LIVE]!, allocator: system - free - unmapped - centralBytes - transferBytes - threadBytes, ...noCaches},
    {name: 'heap size (system bytes)', property: 'generic.heap_size', toma: spanBytes, allocator: system},
    {name: 'page heap free', property: 'tcmalloc.pageheap_free_bytes', toma: normalBytes, allocator: free},
    {name: 'page heap returned', property: 'tcmalloc.pageheap_unmapped_bytes', toma: returnedBytes, allocator: unmapped},
    {name: 'central cache free', property: 'tcmalloc.central_cache_free_bytes', toma: b[CENTRAL_CACHE]! + totals.spanWaste, allocator: centralBytes},
    {name: 'transfer cache free', property: 'tcmalloc.transfer_cache_free_bytes', toma: b[TRANSFER_CACHE]!, allocator: transferBytes},
    {name: 'thread cache free', property: 'tcmalloc.thread_cache_free_bytes', toma: b[THREAD_CACHE]!, allocator: threadBytes, ...noCaches},
    {name: 'free page-heap objects', property: '(page heap spans)', toma: b[PAGE_HEAP]! + b[RETURNED]!, allocator: free + unmapped},
  ]
}
