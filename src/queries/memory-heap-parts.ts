import type {StatePlace} from '../heap/heap-model.js'
import {CENTRAL_CACHE, LIVE, PAGE_HEAP, RETURNED, THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'

/** One line of the accounting: its bytes, and where the allocator keeps a counter of the same, that counter. */
export interface AccountLine {
  part: string
  bytes: number
  /** Of them, the bytes the core file holds (the rest only mapped: a segment the core holds in part); absent on the heap's parts. */
  inCore?: number
  /** The allocator's own figure for the same bytes (its property), where the core holds it. */
  allocator?: {property: string; bytes: number}
  /** The allocator's property of the same bytes where the core holds no counter of it (the process gives it when asked). */
  property?: string
  note?: string
  /** The same bytes split further by the allocator's places (google/tcmalloc's page heap: filler, regions, huge cache, huge allocator); they add up to the line. */
  parts?: AccountLine[]
}

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
  const lines = (state: number, prefix: string) => h.places.filter(p => p.state === state).map(p => ({part: `${prefix}${p.place}`, bytes: p.bytes, property: p.property}))
  const placed = (state: number, whole: AccountLine): AccountLine[] => {
    const mine = lines(state, 'free in ')
    return mine.length > 0 ? mine : [whole]
  }
  // The page heap's lines keep the property that counts them whole, with the places under them.
  const split = (state: number, whole: AccountLine): AccountLine => {
    const mine = lines(state, '')
    return mine.length > 0 ? {...whole, parts: mine} : whole
  }
  return [
    {part: 'live (in use by the application)', bytes: h.state[LIVE]!, property: 'generic.current_allocated_bytes'},
    ...placed(THREAD_CACHE, {part: 'free in per-CPU and per-thread caches', bytes: h.state[THREAD_CACHE]!, property: 'tcmalloc.cpu_free + tcmalloc.thread_cache_free'}),
    ...placed(TRANSFER_CACHE, {part: 'free in transfer caches (sharded included)', bytes: h.state[TRANSFER_CACHE]!, property: 'tcmalloc.transfer_cache_free + tcmalloc.sharded_transfer_cache_free'}),
    {part: 'free in central lists (spans\' own free lists)', bytes: h.state[CENTRAL_CACHE]!, note: 'tcmalloc counts these and the span tail waste below together as tcmalloc.central_cache_free'},
    {part: 'span tail waste (fits no object)', bytes: h.tailWaste},
    split(PAGE_HEAP, {part: 'page heap free (filler pages, huge cache, regions)', bytes: h.state[PAGE_HEAP]!, property: 'tcmalloc.page_heap_free'}),
    split(RETURNED, {part: 'page heap returned to the system (unmapped)', bytes: h.state[RETURNED]!, property: 'tcmalloc.page_heap_unmapped'}),
  ]
}
