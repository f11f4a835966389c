import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {CENTRAL_CACHE, LIVE, THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import {SPAN_IN_USE} from './memory-accounting.js'
import {objectLabel, objectLabelColumns, type ObjectLabelColumns, type SlotColumn} from './object-label.js'
import {PINNED_SHARE} from './pinned-share.js'
import {STATES, spanSlotStates} from './span-slot-states.js'

/** Occupancy buckets: 0–10 %, 10–20 %, …, 90–100 % of a span's slots live (a full span is in the last). */
export const BUCKETS = 10

/** A span's slots by state: live, on the span's own (central) free list, in the transfer cache, in a thread cache. */
interface SlotCounts {
  live: number
  central: number
  transfer: number
  thread: number
}

export interface ClassFragmentation {
  sizeClass: number
  size: number
  spans: number
  /** Slots of each span of the class (the last when spans differ: they do not in gperftools). */
  objectsPerSpan: number
  spanBytes: number
  liveObjects: number
  /** Spans per occupancy bucket (BUCKETS: share of slots live, 0–10 % first). */
  occupancy: number[]
  /** Bytes of the class's free slots (all its spans), by where they are. */
  freeBytes: {central: number; transfer: number; threadCaches: number}
  /** Spans with no live slot: kept from the page heap only by free objects in the caches. */
  emptySpans: number
  /** Spans partly used (some live, some free): the bytes of their free slots, by where those slots are. */
  partial: {spans: number; freeBytes: {central: number; transfer: number; threadCaches: number}}
  /** Spans pinned by a few live objects (PINNED_SHARE): their bytes, and the live objects in them. */
  pinned: {spans: number; bytes: number; liveObjects: number; liveBytes: number}
}

/** Live objects in pinned spans of one name (and, for an unnamed object, its holder). */
export interface PinningGroup {
  name: string
  holder: string | null
  size: number
  objects: number
  bytes: number
  /** Pinned spans holding some of them. */
  spans: number
  /** Pinned spans whose only live objects they are, and those spans' bytes: what freeing them returns. */
  spansAlone: number
  bytesReturned: number
  /** The first addresses (up to the examples asked for). */
  addresses: string[]
}

/** Free objects a thread's cache holds in spans that are pinned or hold no live object. */
export interface CachePin {
  tid: number | null
  /** The CPU whose cache it is, where caches are per CPU (google/tcmalloc); else null. */
  cpu: number | null
  cache: string
  objects: number
  bytes: number
  /** Spans without a live object that this cache's objects keep from the page heap with no other cache's help. */
  spansAlone: number
  bytesAlone: number
}

/**
 * Per size class, how full its spans are and which live objects keep nearly empty spans from the
 * page heap (grouped by name and holder), and which threads' cached free objects do. From the
 * index: the span table, the slot states, the names, the holders and the thread-cache owners.
 * Every in-use span cut into a class is counted from its slots' states (counted once for the
 * index); only the pinned spans' slots, and those of spans whose free slots are in thread caches,
 * are walked.
 */
export function spanOccupancy(index: HeapIndex, examples: number) {
  const {spanSizeClass, spanLocation, spanFirstObject, spanObjectCount, spanObjectSize, spanPages, spanStart} = index
  // Read by blocks once a span is pinned (its objects are then named): most spans are not, and
  // the three columns are 7 bytes a slot (210 MB at 30 M slots).
  const labels = objectLabelColumns(index)
  const classes = new Map<number, ClassFragmentation>()
  const groups = new Map<string, PinningGroup>()
  const caches = new Map<number, CachePin & {seen: number}>()
  const counts: SlotCounts = {live: 0, central: 0, transfer: 0, thread: 0}
  // Each span's slots by state, counted once (span-slot-states.ts): no pass over the slots here.
  const byState = spanSlotStates(index)
  for (let s = 0; s < spanStart.length; s++) {
    const cl = spanSizeClass[s]!
    if (spanLocation[s] !== SPAN_IN_USE || cl === 0) continue
    const first = spanFirstObject[s]!
    const slots = spanObjectCount[s]!
    const size = spanObjectSize[s]!
    const bytes = spanPages[s]! * index.pageSize
    counts.live = byState[s * STATES + LIVE]!
    counts.central = byState[s * STATES + CENTRAL_CACHE]!
    counts.transfer = byState[s * STATES + TRANSFER_CACHE]!
    counts.thread = byState[s * STATES + THREAD_CACHE]!
    let c = classes.get(cl)
    if (!c) {
      c = {sizeClass: cl, size, spans: 0, objectsPerSpan: slots, spanBytes: 0, liveObjects: 0, occupancy: new Array<number>(BUCKETS).fill(0), emptySpans: 0,
        freeBytes: {central: 0, transfer: 0, threadCaches: 0},
        partial: {spans: 0, freeBytes: {central: 0, transfer: 0, threadCaches: 0}}, pinned: {spans: 0, bytes: 0, liveObjects: 0, liveBytes: 0}}
      classes.set(cl, c)
    }
    c.spans++
    c.objectsPerSpan = slots
    c.spanBytes += bytes
    c.liveObjects += counts.live
    c.occupancy[Math.min(BUCKETS - 1, Math.floor((counts.live * BUCKETS) / slots))]!++
    if (counts.live === 0) c.emptySpans++
    c.freeBytes.central += counts.central * size
    c.freeBytes.transfer += counts.transfer * size
    c.freeBytes.threadCaches += counts.thread * size
    if (counts.live > 0 && counts.live < slots) {
      c.partial.spans++
      c.partial.freeBytes.central += counts.central * size
      c.partial.freeBytes.transfer += counts.transfer * size
      c.partial.freeBytes.threadCaches += counts.thread * size
    }
    const pinned = counts.live > 0 && counts.live <= PINNED_SHARE * slots
    if (pinned) {
      c.pinned.spans++
      c.pinned.bytes += bytes
      c.pinned.liveObjects += counts.live
      c.pinned.liveBytes += counts.live * size
      groupPinners(index, groups, labels, first, slots, size, bytes, start => hex(spanStart[s]! + (start - first) * size), examples)
    }
    if (counts.thread > 0 && counts.live <= PINNED_SHARE * slots) cachePins(index, caches, labels.states(), first, slots, size, counts.live === 0 && counts.transfer === 0 ? bytes : 0)
  }
  return {
    pinnedShare: PINNED_SHARE,
    classes: [...classes.values()].sort((a, b) => b.pinned.bytes - a.pinned.bytes || a.sizeClass - b.sizeClass),
    pinners: [...groups.values()].sort((a, b) => b.bytesReturned - a.bytesReturned || b.bytes - a.bytes),
    cachePins: [...caches.values()].map(({seen: _, ...c}) => c).sort((a, b) => b.bytes - a.bytes),
  }
}

/** Adds a pinned span's live objects to their groups (name, or size and holder for an unnamed object). */
function groupPinners(
  index: HeapIndex,
  groups: Map<string, PinningGroup>,
  labels: ObjectLabelColumns,
  first: number,
  slots: number,
  size: number,
  spanBytes: number,
  address: (id: number) => string,
  examples: number,
) {
  const state = labels.states()
  const here = new Set<PinningGroup>()
  for (let id = first; id < first + slots; id++) {
    if (state.at(id) !== LIVE) continue
    const {name, holder} = objectLabel(index, labels.types(), labels.holders(), id, size)
    const key = `${name}\u0000${holder ?? ''}`
    let g = groups.get(key)
    if (!g) groups.set(key, (g = {name, holder, size, objects: 0, bytes: 0, spans: 0, spansAlone: 0, bytesReturned: 0, addresses: []}))
    g.objects++
    g.bytes += size
    if (g.addresses.length < examples) g.addresses.push(address(id))
    here.add(g)
  }
  for (const g of here) g.spans++
  if (here.size === 1) {
    const [g] = here
    g!.spansAlone++
    g!.bytesReturned += spanBytes
  }
}

/** Adds a low-occupancy span's thread-cached objects to their caches; `aloneBytes` > 0 when the span has no live or transfer slot. */
function cachePins(index: HeapIndex, caches: Map<number, CachePin & {seen: number}>, state: SlotColumn, first: number, slots: number, size: number, aloneBytes: number) {
  const here = new Set<CachePin & {seen: number}>()
  for (let id = first; id < first + slots; id++) {
    if (state.at(id) !== THREAD_CACHE) continue
    const owner = index.threadOf(id)
    const key = owner?.cache ?? -1
    let c = caches.get(key)
    if (!c) caches.set(key, (c = {tid: owner?.tid ?? null, cpu: owner?.cpu ?? null, cache: owner ? hex(owner.cache) : 'unattributed', objects: 0, bytes: 0, spansAlone: 0, bytesAlone: 0, seen: 0}))
    c.objects++
    c.bytes += size
    here.add(c)
  }
  if (aloneBytes > 0 && here.size === 1) {
    const [c] = here
    c!.spansAlone++
    c!.bytesAlone += aloneBytes
  }
}
