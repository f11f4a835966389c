import type {StatePlace} from '../heap/heap-model.js'
import {CENTRAL_CACHE, LIVE, PAGE_HEAP, RETURNED, THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import type {AccountLine} from './memory-accounting.js'

/** What the heap-part lines are made of: bytes per state, the spans' tail waste, the allocator's places and counters. */
export interface HeapPartInputs {
  state: Float64Array
  tailWaste: number
  /** A state's bytes by the allocator's places, where it keeps several (the summary's statePlaces). */
  places: StatePlace[]
  /** The allocator's counter of a property as the core holds it (gperftools), if any. */
  counter: (property: string) => {property: string; bytes: number} | undefined
}

/**
 * The heap's spans split by what their bytes hold, one line per place the allocator counts on its
 * own. gperftools keeps its counters in the core, so each line carries the counter's value;
 * google/tcmalloc keeps them nowhere a core holds (its properties are computed when asked), so
 * each line names the property the process would give for the same bytes.
 */
export function heapPartLines(allocator: string | null, h: HeapPartInputs): AccountLine[] {
  if (allocator !== 'google/tcmalloc') {
    return [
      {part: 'live (in use by the application)', bytes: h.state[LIVE]!, allocator: h.counter('generic.current_allocated_bytes')},
      {part: 'free in thread caches', bytes: h.state[THREAD_CACHE]!, allocator: h.counter('tcmalloc.thread_cache_free_bytes')},
      {part: 'free in the transfer cache', bytes: h.state[TRANSFER_CACHE]!, allocator: h.counter('tcmalloc.transfer_cache_free_bytes')},
      {part: 'free in central lists (spans\' own free lists)', bytes: h.state[CENTRAL_CACHE]!, note: 'TCMalloc counts these and the span tail waste below together as central_cache_free_bytes'},
      {part: 'span tail waste (fits no object)', bytes: h.tailWaste},
      {part: 'page heap free (normal)', bytes: h.state[PAGE_HEAP]!, allocator: h.counter('tcmalloc.pageheap_free_bytes')},
      {part: 'page heap returned to the system (unmapped)', bytes: h.state[RETURNED]!, allocator: h.counter('tcmalloc.pageheap_unmapped_bytes')},
    ]
  }
  // A state the model split by place is one line per place; else one line naming every property it covers.
  const placed = (state: number, whole: AccountLine): AccountLine[] => {
    const mine = h.places.filter(p => p.state === state)
    return mine.length > 0 ? mine.map(p => ({part: `free in ${p.place}`, bytes: p.bytes, property: p.property})) : [whole]
  }
  return [
    {part: 'live (in use by the application)', bytes: h.state[LIVE]!, property: 'generic.current_allocated_bytes'},
    ...placed(THREAD_CACHE, {part: 'free in per-CPU and per-thread caches', bytes: h.state[THREAD_CACHE]!, property: 'tcmalloc.cpu_free + tcmalloc.thread_cache_free'}),
    ...placed(TRANSFER_CACHE, {part: 'free in transfer caches (sharded included)', bytes: h.state[TRANSFER_CACHE]!, property: 'tcmalloc.transfer_cache_free + tcmalloc.sharded_transfer_cache_free'}),
    {part: 'free in central lists (spans\' own free lists)', bytes: h.state[CENTRAL_CACHE]!, note: 'tcmalloc counts these and the span tail waste below together as tcmalloc.central_cache_free'},
    {part: 'span tail waste (fits no object)', bytes: h.tailWaste},
    {part: 'page heap free (filler pages, huge cache, regions)', bytes: h.state[PAGE_HEAP]!, property: 'tcmalloc.page_heap_free'},
    {part: 'page heap returned to the system (unmapped)', bytes: h.state[RETURNED]!, property: 'tcmalloc.page_heap_unmapped'},
  ]
}
