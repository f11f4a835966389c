import type {IndexMeta} from './index-meta.js'
import {VIA_LABELS} from '../naming/via.js'
import {STATE_NAMES} from '../heap/states.js'

/**
 * What an index holds, declared once: every array's name, element type, length group, the phase
 * that produces it, its readers and what it means. The writer refuses an array not declared here
 * or of another element type, a reader refuses an index whose array table disagrees with it
 * (schema-check.ts), and the typed accessors of IndexFile and IndexWriter take their names and
 * element types from it, so a wrong name or type is a compile error. docs/INDEX-SCHEMA.md is
 * generated from it (schema-doc.ts).
 *
 * The names are the file's: changing one changes the index's bytes (INDEX_FORMAT_VERSION).
 */

/** Element types as the file's array table names them. */
export interface ElementTypes {
  u8: Uint8Array
  u16: Uint16Array
  u32: Uint32Array
  i32: Int32Array
  f64: Float64Array
}
export type ElementType = keyof ElementTypes

/** Slots per entry of object.liveBefore (queries/object-ids.ts counts public ids by it). */
export const PUBLIC_ID_BLOCK = 4096

/**
 * Arrays that must share a length, and what that length is. A group given as `of` another is
 * that group's length transformed (list starts have one entry more than their lists).
 */
export const LENGTH_GROUPS = {
  span: {doc: 'one per span of the heap model, in address order'},
  object: {doc: 'one per object slot (every slot of every span, live or free)'},
  'object+1': {doc: 'one per object slot and one more: where each slot\'s list starts, and its end', of: 'object', length: (n: number) => n + 1},
  'object+2': {doc: 'one per object slot, one for the virtual root, and one more (list starts)', of: 'object', length: (n: number) => n + 2},
  'object/4096+1': {doc: `one per block of ${PUBLIC_ID_BLOCK} object slots and one more`, of: 'object', length: (n: number) => Math.ceil(n / PUBLIC_ID_BLOCK) + 1},
  edge: {doc: 'one per edge of the reference graph, in the order of the source objects'},
  checkpoint: {doc: 'one per edge checkpoint (edge-words.ts)'},
  root: {doc: 'one per root pointer, by target object'},
  threadCache: {doc: 'one per object in a thread cache, by slot'},
  sample: {doc: 'one per sampled object, by span'},
  'sample+1': {doc: 'one per sampled object and one more (stack starts)', of: 'sample', length: (n: number) => n + 1},
  'sample.pc': {doc: 'the sampled stacks\' return addresses, one after another'},
  sighting: {doc: 'one per sighting of an object in a returned call\'s frame'},
  type: {doc: 'one per type id, id 0 (no name) included: the meta\'s typeNames and one more'},
  thread: {doc: 'one per thread of the core, in the core\'s order'},
  'dom.child': {doc: 'one per node of the dominator tree below the virtual root'},
  'dom.leakStarts': {doc: 'one per leaked structure\'s start'},
  'dom.top': {doc: 'the largest objects dominated by the virtual root alone, at most 1000'},
  'type.via': {doc: 'one per type id and naming tier (naming/via.ts VIA_LABELS): the type ids\' groups of tiers, one after another', of: 'type', length: (n: number) => n * VIA_LABELS.length},
  sizeClass: {doc: 'one per size class a span may have (256: span.sizeClass is a byte)'},
  'span.states': {doc: 'one per span and slot state (heap/states.ts STATE_NAMES): the spans\' groups of states, one after another', of: 'span', length: (n: number) => n * STATE_NAMES.length},
  'holder.table': {doc: 'the holder table\'s JSON text, in UTF-8 bytes (index/holder-table.ts)'},
} as const satisfies Record<string, {doc: string; of?: string; length?: (n: number) => number}>
export type LengthGroup = keyof typeof LENGTH_GROUPS

/**
 * The stages an analysis runs in (pipeline/analyze-core.ts), in order. Each stage's index is
 * whole: the model stage's answers (states, sizes, vtable types) come without the pointer scan,
 * so a query that needs only them never waits for the graph. An index says which stages it holds.
 */
export const STAGES = {
  model: 'the heap model, slot states, size classes, types by vtable and returned frames: no pointer scan',
  graph: 'the reference graph, roots, reachability, leaks, paths, dominators and every naming tier',
} as const
export type Stage = keyof typeof STAGES
export const STAGE_NAMES = Object.keys(STAGES) as Stage[]

/** The analysis phases that produce arrays (analysis/analyze-core.ts), in the order they run, with the stage each belongs to. */
export const PHASES = {
  heap: {stage: 'model', doc: 'the heap model (an allocator model through src/heap): spans, slot states, thread caches, samples'},
  scan: {stage: 'graph', doc: 'the object and root scan (graph/scan.ts): forward edges, roots, checkpoints'},
  reverse: {stage: 'graph', doc: 'the reverse edges (graph/reverse-csr.ts)'},
  paths: {stage: 'graph', doc: 'shortest paths from the roots, reachability, the allocator\'s own objects marked'},
  names: {stage: 'model', doc: 'naming (graph/object-types.ts, naming/): by vtable alone in a model-stage index, every tier\'s name of each object with the graph'},
  frames: {stage: 'model', doc: 'returned frames (analysis/threads.ts): pointers left in dead stack frames'},
  dominators: {stage: 'graph', doc: 'the dominator pass and the tree walk (dominators/retention.ts); absent with retention off'},
  threads: {stage: 'model', doc: 'the core\'s thread list'},
  holders: {stage: 'graph', doc: 'the holder walk (queries/holder-groups.ts), run once on the index so far: each untyped live object\'s holder and the groups by size and holder; absent with retention off'},
} as const satisfies Record<string, {stage: Stage; doc: string}>
export type Phase = keyof typeof PHASES

/** The stage that produces array `name`. */
export function stageOf(name: ArrayName): Stage {
  return PHASES[INDEX_ARRAYS[name].phase].stage
}

interface ArraySpec {
  /** The element type; two where the analysis picks one (type ids: 16 bits while they fit). */
  type: ElementType | readonly ElementType[]
  group: LengthGroup
  phase: Phase
  /** Modules (under src/, a note may follow) that read it: src/index's, then the queries through HeapIndex. */
  readers: readonly string[]
  /** Why the array may be absent; required when not given. */
  optional?: string
  doc: string
}

const NO_RETENTION = 'absent from an index made with retention off (the bench\'s reachability-only analysis)'

/** Every array an index holds, in the order the analysis writes them. */
export const INDEX_ARRAYS = {
  'edge.outStart': {type: 'u32', group: 'object+1', phase: 'scan', readers: ['index/heap-index', 'index/object-columns', 'pipeline/analyze-core (read back by the dominator pass)', 'report/export-json'], doc: 'where each object\'s outgoing edges start in edge.to'},
  'edge.to': {type: 'u32', group: 'edge', phase: 'scan', readers: ['index/heap-index', 'index/edge-offsets', 'index/object-columns', 'report/export-json'], doc: 'each edge\'s target slot (offsets are found again in the core)'},
  'edge.inFrom': {type: 'u32', group: 'edge', phase: 'reverse', readers: ['index/heap-index', 'index/retention-index', 'pipeline/analyze-core (read back by the dominator pass)'], doc: 'each incoming edge\'s source slot, by target, sources in address order'},
  'edge.inStart': {type: 'u32', group: 'object+1', phase: 'reverse', readers: ['index/heap-index', 'index/retention-index', 'pipeline/analyze-core (read back by the dominator pass)'], doc: 'where each object\'s incoming edges start in edge.inFrom'},
  'edge.inEdge': {type: 'u32', group: 'edge', phase: 'reverse', readers: ['index/heap-index'], doc: 'each incoming edge\'s position in edge.to (its forward edge)'},
  'object.parent': {type: 'u32', group: 'object', phase: 'paths', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'breadth-first parent from the roots: a slot, 0xfffffffe (a root points to it) or 0xffffffff (unreached)'},
  'span.record': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'address of the span\'s record in the core'},
  'span.start': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'the span\'s first byte'},
  'span.pages': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'the span\'s length in pages (the meta\'s pageSize)'},
  'span.sizeClass': {type: 'u8', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'the span\'s size class (0: a large object)'},
  'span.location': {type: 'u8', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'in use, on the normal or on the returned free list (the span record\'s location)'},
  'span.refcount': {type: 'u16', group: 'span', phase: 'heap', readers: [], doc: 'objects of the span in use, as the span record counts them'},
  'span.sampled': {type: 'u8', group: 'span', phase: 'heap', readers: [], doc: '1 when the span\'s object was sampled (the span record\'s bit)'},
  'span.objectSize': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'bytes of each object slot of the span'},
  'span.firstObject': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'the slot of the span\'s first object'},
  'span.objectCount': {type: 'f64', group: 'span', phase: 'heap', readers: ['index/heap-index'], doc: 'the span\'s object slots'},
  'span.slotStates': {type: 'u32', group: 'span.states', phase: 'heap', readers: ['index/heap-index', 'queries/span-slot-states'], optional: 'absent from an index made before it: toma memory counts the slots then, once (queries/span-slot-states.ts)', doc: 'each span\'s slots by state (heap/states.ts order): what toma memory sums and sorts spans by, counted once by analyze'},
  'object.state': {type: 'u8', group: 'object', phase: 'heap', readers: ['index/heap-index', 'index/object-columns', 'queries/object-ids'], doc: 'live, or where a free slot is (heap/states.ts)'},
  'object.liveBefore': {type: 'u32', group: 'object/4096+1', phase: 'heap', readers: ['index/object-columns', 'queries/object-ids'], doc: 'live objects before each block of 4096 slots, then all of them (public ids, queries/object-ids.ts)'},
  'threadCache.objects': {type: 'f64', group: 'threadCache', phase: 'heap', readers: ['index/heap-index'], doc: 'the slots held by thread caches, ascending'},
  'threadCache.owner': {type: 'u16', group: 'threadCache', phase: 'heap', readers: ['index/heap-index'], doc: 'for each, its cache in the meta\'s threadCaches'},
  'edge.checkpoint': {type: 'u32', group: 'checkpoint', phase: 'scan', readers: ['index/edge-offsets'], doc: 'edges whose offset is kept, ascending (graph/edge-words.ts)'},
  'edge.checkpointOffset': {type: 'f64', group: 'checkpoint', phase: 'scan', readers: ['index/edge-offsets'], doc: 'each checkpoint edge\'s byte offset in its source object'},
  'root.kind': {type: 'u8', group: 'root', phase: 'scan', readers: ['index/heap-index', 'report/export-json'], doc: 'what holds the root pointer (graph/csr.ts ROOT_KIND_NAMES)'},
  'root.thread': {type: 'i32', group: 'root', phase: 'scan', readers: ['index/heap-index', 'report/export-json'], doc: 'the thread whose stack, TLS or register holds it, or -1'},
  'root.address': {type: 'f64', group: 'root', phase: 'scan', readers: ['index/heap-index', 'report/export-json'], doc: 'where the pointer is stored (a register root: the register\'s number)'},
  'root.to': {type: 'u32', group: 'root', phase: 'scan', readers: ['index/heap-index', 'report/export-json'], doc: 'the target slot, ascending'},
  'root.toOffset': {type: 'u32', group: 'root', phase: 'scan', readers: ['index/heap-index', 'report/export-json'], doc: 'the pointer\'s value minus its target\'s start'},
  'sample.span': {type: 'u32', group: 'sample', phase: 'heap', readers: ['index/sample-index'], doc: 'the span of each sampled object, ascending'},
  'sample.requestedSize': {type: 'f64', group: 'sample', phase: 'heap', readers: ['index/sample-index'], doc: 'the size the program asked for'},
  'sample.stackStart': {type: 'u32', group: 'sample+1', phase: 'heap', readers: ['index/sample-index'], doc: 'where each sample\'s stack starts in sample.pc'},
  'sample.pc': {type: 'f64', group: 'sample.pc', phase: 'heap', readers: ['index/sample-index'], doc: 'allocation stacks\' return addresses, innermost first'},
  'sample.order': {type: 'u32', group: 'sample', phase: 'heap', readers: ['index/sample-index'], doc: 'the samples in the order TCMalloc lists them (oldest first)'},
  'sighting.object': {type: 'u32', group: 'sighting', phase: 'frames', readers: ['index/sighting-index'], doc: 'the slot a dead frame still points at'},
  'sighting.tid': {type: 'i32', group: 'sighting', phase: 'frames', readers: ['index/sighting-index'], doc: 'the thread whose stack holds the frame'},
  'sighting.at': {type: 'f64', group: 'sighting', phase: 'frames', readers: ['index/sighting-index'], doc: 'where the pointer lies in the frame'},
  'sighting.frame': {type: 'u32', group: 'sighting', phase: 'frames', readers: ['index/sighting-index'], doc: 'the frame\'s label in the meta\'s sightingFrames'},
  'object.type': {type: ['u16', 'u32'], group: 'object', phase: 'names', readers: ['index/heap-index', 'index/retention-index', 'index/object-columns', 'queries/leaks', 'queries/classes', 'queries/name-vias', 'queries/holder-groups', 'queries/diff-objects', 'report/export-json'], doc: 'name id (0: none; k: the meta\'s typeNames[k - 1]); 32 bits only past 65,535 names'},
  'object.via': {type: 'u8', group: 'object', phase: 'names', readers: ['index/heap-index', 'index/object-columns', 'queries/name-vias', 'report/export-json'], doc: 'how the name was known (naming/via.ts)'},
  'object.reachable': {type: 'u8', group: 'object', phase: 'paths', readers: ['index/object-columns', 'index/heap-index', 'queries/leaks', 'queries/holder-groups', 'report/export-json'], doc: '1 reached from a root, 0 not (a leak when live), 2 the allocator\'s own unreferenced object'},
  'type.liveObjects': {type: 'f64', group: 'type', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'live objects of each name id (queries/name-counts.ts)'},
  'type.liveBytes': {type: 'f64', group: 'type', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'their bytes'},
  'type.firstLive': {type: 'f64', group: 'type', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'the first live slot of each name id (-1: none): the order names are first met in'},
  'type.viaObjects': {type: 'f64', group: 'type.via', phase: 'names', readers: ['index/heap-index', 'queries/classes', 'queries/name-vias'], doc: 'live objects of each name id named by each tier'},
  'sizeClass.untypedObjects': {type: 'f64', group: 'sizeClass', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'live objects without a name, per size class'},
  'sizeClass.untypedBytes': {type: 'f64', group: 'sizeClass', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'their bytes'},
  'sizeClass.firstUntyped': {type: 'f64', group: 'sizeClass', phase: 'names', readers: ['index/heap-index', 'queries/classes'], doc: 'the first such slot of each size class (-1: none)'},
  'object.idom': {type: 'u32', group: 'object', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups', 'report/export-json'], optional: NO_RETENTION, doc: 'immediate dominator: a slot, a thread group or the virtual root above the slots, 0xffffffff not in the tree (dominators/dominator-ids.ts)'},
  'object.retainedBytes': {type: 'f64', group: 'object', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups', 'queries/diff-growth', 'report/export-json'], optional: NO_RETENTION, doc: 'bytes the object keeps alive, its own included'},
  'object.retainedObjects': {type: 'u32', group: 'object', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups'], optional: NO_RETENTION, doc: 'objects it keeps alive, itself included'},
  'dom.childStart': {type: 'u32', group: 'object+2', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups'], optional: NO_RETENTION, doc: 'where each node\'s children start in dom.child (the virtual root\'s last)'},
  'dom.child': {type: 'u32', group: 'dom.child', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups'], optional: NO_RETENTION, doc: 'dominator-tree children, the largest first, the others ascending'},
  'dom.leakStarts': {type: 'u32', group: 'dom.leakStarts', phase: 'dominators', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'leaked objects no other leaked object reaches'},
  'dom.top': {type: 'u32', group: 'dom.top', phase: 'dominators', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'objects dominated by the virtual root alone, largest retained first'},
  'type.retainedBytes': {type: 'f64', group: 'type', phase: 'dominators', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'bytes each type id\'s objects retain, each byte once'},
  'type.retainedObjects': {type: 'f64', group: 'type', phase: 'dominators', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'objects each type id\'s objects retain, each once'},
  'thread.retainedBytes': {type: 'f64', group: 'thread', phase: 'dominators', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups'], optional: NO_RETENTION, doc: 'bytes reachable only from the thread\'s registers, stack and TLS'},
  'thread.retainedObjects': {type: 'f64', group: 'thread', phase: 'dominators', readers: ['index/retention-index'], optional: NO_RETENTION, doc: 'objects reachable only from that thread'},
  'thread.tid': {type: 'i32', group: 'thread', phase: 'threads', readers: ['index/retention-index', 'index/object-columns', 'queries/holder-groups'], doc: 'each thread\'s id, in the order the per-thread arrays and thread groups use'},
  'object.holder': {type: 'i32', group: 'object', phase: 'holders', readers: ['index/heap-index', 'index/object-columns', 'queries/holder-groups (find-object, the export)'], optional: NO_RETENTION, doc: 'each untyped live object\'s holder in holder.table\'s holders; -1 for every other slot (a named, free or TCMalloc\'s own)'},
  'object.holderOffset': {type: 'u32', group: 'object', phase: 'holders', readers: ['index/heap-index', 'index/object-columns', 'queries/holder-groups (find-object, the export)'], optional: NO_RETENTION, doc: 'where in its holder the object\'s chain starts (0xffffffff: not read from the core)'},
  'holder.table': {type: 'u8', group: 'holder.table', phase: 'holders', readers: ['index/heap-index', 'queries/holder-groups (top, leaks, suspects, find-object, the export)'], optional: NO_RETENTION, doc: 'the holders and, per scope (all, reachable, leaked), the groups of untyped live objects by size and holder (index/holder-table.ts)'},
} as const satisfies Record<string, ArraySpec>

export type ArrayName = keyof typeof INDEX_ARRAYS

type TypesOf<N extends ArrayName> = (typeof INDEX_ARRAYS)[N]['type']
/** Distributes over a union of names: each name's types, however declared. */
type ElementTypeOf<N extends ArrayName> = N extends ArrayName ? (TypesOf<N> extends readonly ElementType[] ? TypesOf<N>[number] : TypesOf<N>) : never

/** The typed array an index array is read as (a union where the analysis picks one of two types). */
export type ArrayOf<N extends ArrayName> = ElementTypes[ElementTypeOf<N> & ElementType]

/** The names of arrays of one element type (for views that read several alike). */
export type ArrayNamesOf<T extends ElementType> = {[N in ArrayName]: ElementTypeOf<N> extends T ? N : never}[ArrayName]

/** Arrays keyed by name, each of its declared type: a key not declared is `never` (a compile error). */
export type DeclaredArrays<A> = {[K in keyof A]: K extends ArrayName ? ArrayOf<K> : never}

/** The element types array `name` may have, or undefined when the schema does not declare it. */
export function declaredTypes(name: string): readonly ElementType[] | undefined {
  if (!Object.hasOwn(INDEX_ARRAYS, name)) return undefined
  const type = INDEX_ARRAYS[name as ArrayName].type
  return typeof type === 'string' ? [type] : type
}

export const ARRAY_NAMES = Object.keys(INDEX_ARRAYS) as ArrayName[]

/** The meta's fields (index-meta.ts), one line each: every field of IndexMeta must be here. */
export const META_FIELDS: Record<keyof IndexMeta, string> = {
  inputs: 'what the analysis depended on: the core file, each module file, the options that change the answer',
  pageSize: 'the allocator\'s page size (span.pages counts these)',
  summary: 'the analyze report (the summary `toma analyze` prints)',
  moduleWarnings: 'warnings every query repeats (module files missing or refused)',
  sizeClassSizes: 'bytes of each size class (span.sizeClass indexes it)',
  threadCaches: 'each thread cache\'s address and thread, or its CPU where caches are per CPU (threadCache.owner indexes it)',
  typeNames: 'the name of each type id ≥ 1 of object.type',
  typeKinds: 'what sort of block each name is ("object" for a C/C++ type)',
  naming: 'the naming tiers\' counts, notes, findings and conflicts',
  rootRegions: 'the root regions scanned, by start (a root\'s label)',
  accumulations: 'accumulation points of the objects retaining 1 % or more of the live heap',
  samplePeriod: 'TCMalloc\'s sampling period, or null when not known',
  sightingFrames: 'the frame labels of the sightings (sighting.frame indexes them)',
  graphUnderWay: 'in a model-stage index whose graph stage was still running: that process (its pid and start time), which a query that needs the graph waits for',
}
