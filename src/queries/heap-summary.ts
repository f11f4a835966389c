import {hex} from '../errors.js'
import type {Program} from '../program/program.js'
import {STATE_NAMES, LIVE} from '../heap/states.js'
import type {HeapModel} from '../heap/heap-model.js'
import type {GraphFacts} from '../graph/scan.js'
import type {FreePointers} from '../graph/free-pointers.js'
import type {ObjectTypes} from '../graph/object-types.js'
import {ROOT_KIND_NAMES, ROOT_REGISTER} from '../graph/csr.js'
import {missingModuleWarnings} from './missing-modules.js'
import {reportWarnings} from './warning-report.js'
import {heapDamage} from './heap-damage.js'
import {ROOT_OPTION_NAMES} from '../graph/root-kinds.js'
import {ALLOCATOR_INTERNAL, UNREACHED} from '../graph/allocator-internal.js'
import type {NamingResult} from '../naming/name-heap.js'
import {namingSummary, namingWarnings} from './naming-summary.js'
import {heapObjects} from '../heap/objects.js'
import {metadataExtent} from './metadata-extent.js'
import {spanIntervals} from '../graph/roots.js'
import {hugePageFillSummary} from './huge-page-fill-summary.js'

/** The graph stage's part of the summary: the graph with its reachability (null before that stage). */
export interface SummaryGraph {
  facts: GraphFacts
  reachable: Uint8Array
}

/** No pointers into free slots: what the model stage knows before the scan finds them. */
const NO_FREE_POINTERS: FreePointers = {count: 0, word: new Float64Array(0), value: new Float64Array(0), target: new Uint32Array(0)}

/**
 * The figures `toma analyze` reports, as plain JSON-able data (also stored in the index). Without
 * the graph (the model stage), `graph` is null and the damage report names no dangling pointers.
 */
export function heapSummary(program: Program, heap: HeapModel, withGraph: SummaryGraph | null, types: ObjectTypes, naming: NamingResult, topClasses = 12) {
  const {spans} = heap
  const kinds = heap.spanKinds()
  const classes = heap.sizeClassUse().sort((a, b) => b.liveBytes - a.liveBytes)
  const graph = withGraph?.facts ?? null
  // After the large phases: it unwinds every thread, whose call-frame information then stays loaded.
  const damage = heapDamage(program, heap, types, graph?.freePointers ?? NO_FREE_POINTERS, heap.activity(program))
  return {
    core: {path: program.coreFile, size: program.core.size, pid: program.core.process.pid, command: program.core.process.command},
    allocator: heap.describe(),
    threads: program.core.threads.map(t => ({
      tid: t.tid,
      threadCaches: heap.threadCaches.filter(c => c.tid === t.tid).map(c => hex(c.address)),
    })),
    threadCaches: heap.threadCaches.map(c => ({
      address: hex(c.address),
      tid: c.tid,
      inTls: c.inTls,
      bytes: c.bytes,
      objects: c.objects,
    })),
    spans: {total: spans.count, byKind: kinds},
    /** Objects the allocator sampled (with their allocation stacks), the bytes they asked for, the sampling period (null: unknown). */
    sampled: {objects: heap.sampled.span.length, requestedBytes: heap.sampled.requestedSize.reduce((a, b) => a + b, 0), period: heap.sampled.period},
    states: STATE_NAMES.map((name, i) => ({state: name, objects: heap.totals.objects[i]!, bytes: heap.totals.bytes[i]!})),
    spanWasteBytes: heap.totals.spanWaste,
    /** States split by the allocator's places, where it keeps several of one state (heap-model.ts StatePlace). */
    statePlaces: heap.totals.places ?? [],
    /** The hugepages the allocator fills with small spans, by pages used (google/tcmalloc's filler); null where it has none. */
    hugePageFill: hugePageFillSummary(heap.hugePageFill),
    topSizeClasses: classes.slice(0, topClasses),
    // The stored key of the allocator's figure is `tcmalloc` (the index's summary, read by the reports).
    crossCheck: heap.crossCheck.map(({allocator, notIndependent, ...c}) => ({...c, tcmalloc: allocator, ...(notIndependent === undefined ? {} : {notIndependent}), equal: c.toma === allocator, independent: notIndependent === undefined})),
    graph: withGraph && graphSummary(program, heap, withGraph, types),
    /** Live objects and bytes named, by the tier that named them (naming/). */
    names: namingSummary(heapObjects(heap), LIVE, naming),
    warnings: reportWarnings([heap.warnings, ...(graph ? [graph.warnings] : []), namingWarnings(naming)], heap.name, heap.crossCheck, missingModuleWarnings(program, heap.module.loaded), new Map(damage.touchedFigures.filter(t => t.inFlight).map(t => [t.property, t.why]))),
    /** Broken free lists and who broke them, the crash, threads inside the allocator and its locks held (heap-damage.ts). */
    damage,
  }
}

export type HeapSummary = ReturnType<typeof heapSummary>

/** The summary's graph figures: the scan, the roots, leaks. */
function graphSummary(program: Program, heap: HeapModel, {facts: graph, reachable}: SummaryGraph, types: ObjectTypes) {
  return {
    scannedObjects: graph.scannedObjects,
    scannedBytes: graph.scannedBytes,
    unreadableObjects: graph.unreadableObjects,
    edges: graph.edgeCount,
    roots: rootKindTotals(program, graph),
    rootsNotScanned: {allocatorBytes: graph.roots.excluded.allocator, deadStackBytes: graph.roots.excluded.deadStack},
    rootsHow: graph.roots.how,
    /** The allocator's metadata as the model located it, per segment of the core (toma memory's accounting). */
    allocatorMetadata: metadataExtent(program.core.memory, graph.roots.metadata, spanIntervals(heap)),
    typedObjects: types.typed,
    unreachable: unreachableTotals(heap, reachable, UNREACHED),
    /** Unreferenced allocations of the allocator itself (TCMalloc's MallocExtension singleton, a sampled object's proxy): not counted as leaked. */
    allocatorInternal: unreachableTotals(heap, reachable, ALLOCATOR_INTERNAL),
    types: types.names.length,
    warnings: graph.warnings.total,
  }
}

/** Per root kind: whether it was used (`--roots`), how many roots it gave, how many bytes were scanned for them. */
function rootKindTotals(program: Program, graph: GraphFacts) {
  return ROOT_KIND_NAMES.map((kind, k) => ({
    kind,
    option: ROOT_OPTION_NAMES[k]!,
    used: graph.roots.kinds.has(k),
    count: graph.rootKind.reduce((n, x) => n + (x === k ? 1 : 0), 0),
    scannedBytes: !graph.roots.kinds.has(k)
      ? 0
      : k === ROOT_REGISTER
        ? program.core.threads.length * program.core.arch.registerNames.length * 8
        : graph.roots.ranges.reduce((n, r) => n + (r.kind === k ? r.end - r.start : 0), 0),
  }))
}

/** Live objects whose reachability is `which` (UNREACHED: the leak total): count and bytes. */
function unreachableTotals(heap: HeapModel, reachable: Uint8Array, which: number) {
  const {spans, state} = heap
  let objects = 0
  let bytes = 0
  for (let s = 0; s < spans.count; s++) {
    let here = 0
    for (let id = spans.firstObject[s]!, end = id + spans.objectCount[s]!; id < end; id++) if (reachable[id] === which && state[id] === LIVE) here++
    objects += here
    bytes += here * spans.objectSize[s]!
  }
  return {objects, bytes}
}
