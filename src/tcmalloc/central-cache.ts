import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Layout} from './layout.js'
import {CENTRAL_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import type {StateMarker} from './state-marker.js'
import type {SizeClasses} from './size-map.js'
import {IN_USE, type SpanTable} from './spans.js'
import {SPAN} from './layout.js'
import type {DamageLog} from '../heap/damage.js'
import {walkFreeList} from './free-list-walk.js'
import {hexWord} from '../core/words.js'
import type {Warnings} from '../heap/warnings.js'

/** What the central cache's own counters say, per size class (for TCMalloc's figures). */
export interface CentralCounters {
  counter: Float64Array
  numSpans: Float64Array
  usedSlots: Int32Array
}

const MAX_SLOTS = 64

export function readCentralCounters(memory: AddressSpace, centralCache: number, layout: Layout, sizes: SizeClasses): CentralCounters {
  const c = layout.central
  const out: CentralCounters = {counter: new Float64Array(sizes.count), numSpans: new Float64Array(sizes.count), usedSlots: new Int32Array(sizes.count)}
  for (let cl = 1; cl < sizes.count; cl++) {
    const e = centralCache + cl * c.stride
    out.counter[cl] = memory.readU64(e + c.counter) ?? 0
    out.numSpans[cl] = memory.readU64(e + c.numSpans) ?? 0
    out.usedSlots[cl] = memory.readI32(e + c.usedSlots) ?? 0
  }
  return out
}

/**
 * A class's spans and free objects that the page map shows and its central list's num_spans_ and
 * counter_ do not count: what CentralFreeList::Populate holds between cutting a new span into
 * objects and linking it, with no lock held (inside-allocator.ts tells it from damage by the frames).
 */
export interface UncountedSpans {
  sizeClass: number
  /** The central list's entry (where its warnings point). */
  entry: number
  /** In-use spans of the class beyond num_spans_ (negative: fewer). */
  spans: number
  /** Objects on the class's spans' free lists beyond counter_ (negative: fewer). */
  objects: number
}

/**
 * Each small span's own free list (the central cache's objects): walked, bounded by the span's
 * capacity. Returns the classes whose counters disagree with the spans.
 */
export function markSpanFreeLists(memory: AddressSpace, spans: SpanTable, marker: StateMarker, counters: CentralCounters, sizes: SizeClasses, centralEntry: (cl: number) => number, warnings: Warnings, damage: DamageLog): UncountedSpans[] {
  const freeByClass = new Float64Array(counters.counter.length)
  const spansByClass = new Float64Array(counters.counter.length)
  let s = 0
  // Made only for a warning: formatting it for each of the heap's spans costs more than the walks.
  const name = () => `span ${hex(spans.record[s]!)} (class ${spans.sizeClass[s]}) free list`
  for (; s < spans.count; s++) {
    const cl = spans.sizeClass[s]!
    if (spans.location[s] !== IN_USE || cl === 0) continue
    spansByClass[cl]!++
    const capacity = spans.objectCount[s]!
    const record = spans.record[s]!
    const walked = walkFreeList(
      memory,
      marker,
      {name, structure: record, headSlot: record + SPAN.objects, head: spans.freeHead[s]!, sizeClass: cl, span: s, state: CENTRAL_CACHE, limit: capacity + 1, expected: capacity - spans.refcount[s]!, classSize: sizes.size[cl]!, tid: null},
      warnings,
      damage,
    )
    const n = walked.entries
    freeByClass[cl]! += n
    if (capacity - n !== spans.refcount[s]) {
      const message = `span ${hex(record)}: ${n} free of ${capacity} objects${walked.broken ? ' before a bad link' : ''}, but refcount says ${spans.refcount[s]} handed out`
      if (walked.broken) warnings.addDamage('span', message, record)
      else warnings.add('span', message, record)
    }
  }
  const uncounted: UncountedSpans[] = []
  for (let cl = 1; cl < counters.counter.length; cl++) {
    if (freeByClass[cl] !== counters.counter[cl]) {
      warnings.add('central-cache', `class ${cl}: spans' free lists hold ${freeByClass[cl]} objects, central counter_ says ${counters.counter[cl]}`, centralEntry(cl))
    }
    if (spansByClass[cl] !== counters.numSpans[cl]) {
      warnings.add('central-cache', `class ${cl}: ${spansByClass[cl]} in-use spans in the page map, central num_spans_ says ${counters.numSpans[cl]}`, centralEntry(cl))
    }
    if (freeByClass[cl] !== counters.counter[cl] || spansByClass[cl] !== counters.numSpans[cl]) {
      uncounted.push({sizeClass: cl, entry: centralEntry(cl), spans: spansByClass[cl]! - counters.numSpans[cl]!, objects: freeByClass[cl]! - counters.counter[cl]!})
    }
  }
  return uncounted
}

/** The transfer cache: tc_slots_[0 .. used_slots_) of each class, each a chain of num_objects_to_move objects. */
export function markTransferCache(
  memory: AddressSpace,
  centralCache: number,
  layout: Layout,
  sizes: SizeClasses,
  counters: CentralCounters,
  marker: StateMarker,
  warnings: Warnings,
  damage: DamageLog,
): void {
  const c = layout.central
  for (let cl = 1; cl < sizes.count; cl++) {
    const entry = centralCache + cl * c.stride
    let used = counters.usedSlots[cl]!
    if (used < 0 || used > MAX_SLOTS) {
      warnings.add('transfer-cache', `class ${cl}: used_slots_ ${used} out of range 0..${MAX_SLOTS}`, entry + c.usedSlots)
      used = Math.max(0, Math.min(MAX_SLOTS, used))
    }
    const batch = sizes.objectsToMove[cl]!
    for (let slot = 0; slot < used; slot++) {
      const at = entry + c.slots + slot * 16
      const tail = memory.readU64(at + 8)
      const name = () => `transfer slot ${slot} of class ${cl} (${hex(at)})`
      const walked = walkFreeList(
        memory,
        marker,
        {name, structure: at, headSlot: at, head: memory.readU64(at) ?? 0, sizeClass: cl, span: -1, state: TRANSFER_CACHE, limit: batch, expected: batch, classSize: sizes.size[cl]!, tid: null},
        warnings,
        damage,
      )
      if (!walked.broken && (walked.entries !== batch || walked.last !== tail)) {
        warnings.add('transfer-cache', `${name()}: chain has ${walked.entries} objects ending at ${hex(walked.last)}, expected ${batch} ending at ${hexWord(memory, at + 8)}`, at)
      }
    }
  }
}

/**
 * A slot past used_slots_ keeps what it last held (RemoveRange does not clear it), and those
 * objects were handed out since. If every object of its chain is still linked as TCMalloc left
 * it and none is on any list, used_slots_ itself may be damaged (too small): the chain's objects
 * are then counted live, and the warning says so. Run after every list is marked.
 */
export function checkUnusedTransferSlots(memory: AddressSpace, centralCache: number, layout: Layout, sizes: SizeClasses, counters: CentralCounters, marker: StateMarker, warnings: Warnings): void {
  const c = layout.central
  for (let cl = 1; cl < sizes.count; cl++) {
    const entry = centralCache + cl * c.stride
    const used = Math.max(0, Math.min(MAX_SLOTS, counters.usedSlots[cl]!))
    for (let slot = used; slot < MAX_SLOTS; slot++) checkUnusedSlot(memory, entry + c.slots + slot * 16, sizes.objectsToMove[cl]!, marker, warnings, `transfer slot ${slot} of class ${cl}`)
  }
}

function checkUnusedSlot(memory: AddressSpace, at: number, batch: number, marker: StateMarker, warnings: Warnings, name: string): void {
  const head = memory.readU64(at)
  const tail = memory.readU64(at + 8)
  if (!head || !tail) return
  let p = head
  let last = 0
  for (let n = 0; n < batch; n++) {
    if (!marker.isLiveObjectStart(p)) return
    last = p
    p = memory.readU64(p) ?? 0
  }
  if (last === tail) {
    warnings.add('transfer-cache', `${name} (${hex(at)}), past used_slots_, still holds an intact chain of ${batch} objects that are counted live: used_slots_ may be damaged`, at)
  }
}
