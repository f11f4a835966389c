import type {Program} from '../program/program.js'
import type {HeapModel} from '../heap/heap-model.js'
import {LIVE} from '../heap/states.js'
import {heapObjects} from '../heap/objects.js'
import type {TypeNamer} from '../graph/types.js'
import {liveFirstWords} from '../heap/first-words.js'
import {nameObjects, type ObjectTypes} from '../graph/object-types.js'
import {allocatorObjects} from '../graph/allocator-internal.js'
import {nameHeap, type NamingResult} from '../naming/name-heap.js'
import {fitsRequest} from '../heap/request-fit.js'
import {heapSummary, type HeapSummary} from '../queries/heap-summary.js'
import {deadFrameSightings} from '../queries/threads.js'
import {sightingTable} from '../index/sighting-index.js'
import {liveBeforeBlocks} from '../queries/object-ids.js'
import {countSpanSlotStates} from '../queries/span-slot-states.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'

/** What the model stage knows: types by vtable, the allocator's own objects, the summary without a graph. */
export interface ModelStage {
  /** Types by vtable alone (the graph stage's naming tiers start from these). */
  vtableTypes: ObjectTypes
  /** TCMalloc's own allocations (allocator-internal.ts), for the graph stage's reachability. */
  ownObjects: Uint32Array
  /** The names a model-stage index holds: by vtable alone. */
  naming: NamingResult
  /** The same as type ids. */
  types: ObjectTypes
  summary: HeapSummary
  /** Pointers returned calls left in their frames: found without the graph, kept in both stages' indexes. */
  sightings: ReturnType<typeof sightingTable>
}

/**
 * The model stage after the heap model: each live object's first word read (no pointer scan),
 * types named by vtable, the allocator's own objects found, and the summary without the graph.
 * The first words are dropped on return: the scan does not collect them again. `typesKnown` is
 * called as soon as the vtable types are (the graph stage's naming tiers start from them).
 */
export function modelStage(program: Program, heap: HeapModel, namer: TypeNamer, progress?: ProgressUpdate, typesKnown?: (vtableTypes: ObjectTypes) => void): ModelStage {
  const {vtableTypes, ownObjects} = typesByVtable(program, heap, namer, progress)
  typesKnown?.(vtableTypes)
  const objects = heapObjects(heap)
  // No tier past the vtables: each of the others reads objects' bytes the graph stage reads anyway.
  const naming = nameHeap(program, objects, LIVE, namer, [], vtableTypes, fitsRequest(heap.requestFit()), [])
  const types = naming.names.asTypes()
  progress?.('summary', 0, 1)
  const summary = heapSummary(program, heap, null, types, naming)
  progress?.('returned frames', 0, 1)
  const sightings = sightingTable(deadFrameSightings(program, addr => objects.findObject(addr)))
  return {vtableTypes, ownObjects, naming, types, summary, sightings}
}

/** Types by vtable from the objects' first words, which go once the allocator's own objects are found. */
function typesByVtable(program: Program, heap: HeapModel, namer: TypeNamer, progress?: ProgressUpdate) {
  progress?.('types', 0, 1)
  // On this thread, where read here: a second one reading other spans made it slower on the bench core (BENCHMARKS.md).
  const firstWords = liveFirstWords(program.core.memory, heap, (done, total) => progress?.('types', done, total))
  const vtableTypes = nameObjects(firstWords, namer, progress)
  return {vtableTypes, ownObjects: allocatorObjects(heap, firstWords, vtableTypes, program.core.memory)}
}

/** The heap model's arrays as the index keeps them (both stages' indexes). */
export function heapArrays(heap: HeapModel) {
  const sp = heap.spans
  const sa = heap.sampled
  return {
    'span.record': sp.record, 'span.start': sp.start, 'span.pages': sp.pages, 'span.sizeClass': sp.sizeClass, 'span.location': sp.location,
    'span.refcount': sp.refcount, 'span.sampled': sp.sampled, 'span.objectSize': sp.objectSize, 'span.firstObject': sp.firstObject, 'span.objectCount': sp.objectCount,
    'span.slotStates': countSpanSlotStates(sp.firstObject, sp.objectCount, heap.state),
    'object.state': heap.state, 'object.liveBefore': liveBeforeBlocks(heap.state),
    'threadCache.objects': heap.threadCacheObjects, 'threadCache.owner': heap.threadCacheOwner,
    'sample.span': sa.span, 'sample.requestedSize': sa.requestedSize, 'sample.stackStart': sa.stackStart, 'sample.pc': sa.pc, 'sample.order': sa.order,
  }
}
