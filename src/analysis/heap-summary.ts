import {hex} from '../errors.js'
import type {Program} from '../program/program.js'
import {STATE_NAMES, LIVE} from '../tcmalloc/object-states.js'
import {IN_USE, ON_NORMAL_FREELIST, ON_RETURNED_FREELIST} from '../tcmalloc/spans.js'
import type {TcmallocHeap} from '../tcmalloc/heap.js'
import type {GraphFacts} from '../graph/scan.js'
import type {ObjectTypes} from '../graph/object-types.js'
import {ROOT_KIND_NAMES, ROOT_REGISTER} from '../graph/csr.js'
import {missingModuleWarnings} from './missing-modules.js'
import {reportWarnings} from './warning-report.js'
import {heapDamage} from './heap-damage.js'
import {allocatorActivity} from '../tcmalloc/inside-allocator.js'
import {ROOT_OPTION_NAMES} from '../graph/root-kinds.js'
import {REGISTER_NAMES} from '../core/threads.js'
import {ALLOCATOR_INTERNAL, UNREACHED} from '../graph/allocator-internal.js'
import type {NamingResult} from '../naming/name-heap.js'
import {namingSummary, namingWarnings} from './naming-summary.js'
import {heapObjects} from '../tcmalloc/heap.js'

/** The figures `toma analyze` reports, as plain JSON-able data (also stored in the index). */
export function heapSummary(program: Program, heap: TcmallocHeap, graph: GraphFacts, types: ObjectTypes, reachable: Uint8Array, naming: NamingResult, topClasses = 12) {
  const {globals, spans, state} = heap
  const g = globals
  const ps = heap.pageSize
  const kinds = {
    'small-object': {spans: 0, bytes: 0},
    large: {spans: 0, bytes: 0},
    sampled: {spans: 0, bytes: 0},
    'page-heap free': {spans: 0, bytes: 0},
    returned: {spans: 0, bytes: 0},
  }
  for (let s = 0; s < spans.count; s++) {
    const bytes = spans.pages[s]! * ps
    const kind =
      spans.location[s] === ON_NORMAL_FREELIST
        ? 'page-heap free'
        : spans.location[s] === ON_RETURNED_FREELIST
          ? 'returned'
          : spans.sizeClass[s]! > 0
            ? 'small-object'
            : spans.sampled[s]
              ? 'sampled'
              : 'large'
    kinds[kind].spans++
    kinds[kind].bytes += bytes
  }
  // Live and free objects per size class of in-use small-object spans (classes in first-seen order).
  const live = new Float64Array(g.sizes.count)
  const free = new Float64Array(g.sizes.count)
  const seen: number[] = []
  // Span by span (every slot of the heap: no call a slot).
  for (let s = 0; s < spans.count; s++) {
    const cl = spans.sizeClass[s]!
    if (spans.location[s] !== IN_USE || cl === 0) continue
    const first = spans.firstObject[s]!
    const end = first + spans.objectCount[s]!
    let liveHere = 0
    for (let id = first; id < end; id++) if (state[id] === LIVE) liveHere++
    if (live[cl] === 0 && free[cl] === 0 && end > first) seen.push(cl)
    live[cl]! += liveHere
    free[cl]! += end - first - liveHere
  }
  const classes = seen
    .map(cl => ({sizeClass: cl, size: g.sizes.size[cl]!, liveObjects: live[cl]!, liveBytes: live[cl]! * g.sizes.size[cl]!, freeObjects: free[cl]!}))
    .sort((a, b) => b.liveBytes - a.liveBytes)
  // After the large phases: it unwinds every thread, whose call-frame information then stays loaded.
  const damage = heapDamage(program, heap, types, graph.freePointers, allocatorActivity(program, heap))
  return {
    core: {path: program.coreFile, size: program.core.size, pid: program.core.process.pid, command: program.core.process.command},
    allocator: {
      kind: 'gperftools' as const,
      version: g.version,
      versionHow: g.versionHow,
      layoutGroup: g.layout.group,
      pageSize: ps,
      module: heap.module.loaded.module.path,
      moduleFile: heap.module.loaded.file?.path ?? null,
      globals: {
        pageHeap: {address: hex(g.pageHeap), how: g.how.pageHeap},
        centralCache: {address: hex(g.centralCache), how: g.how.centralCache},
        sizeMap: {address: hex(g.sizeMap), how: g.how.sizeMap},
        threadHeaps: {address: g.threadHeaps === null ? null : hex(g.threadHeaps), how: g.how.threadHeaps},
      },
      sizeClasses: g.sizes.count - 1,
    },
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
    /** Objects TCMalloc sampled (with their allocation stacks), the bytes they asked for, the sampling period (null: unknown). */
    sampled: {objects: heap.sampled.span.length, requestedBytes: heap.sampled.requestedSize.reduce((a, b) => a + b, 0), period: heap.sampled.period},
    states: STATE_NAMES.map((name, i) => ({state: name, objects: heap.totals.objects[i]!, bytes: heap.totals.bytes[i]!})),
    spanWasteBytes: heap.totals.spanWaste,
    topSizeClasses: classes.slice(0, topClasses),
    crossCheck: heap.crossCheck.map(c => ({...c, equal: c.toma === c.tcmalloc, independent: c.notIndependent === undefined})),
    graph: {
      scannedObjects: graph.scannedObjects,
      scannedBytes: graph.scannedBytes,
      unreadableObjects: graph.unreadableObjects,
      edges: graph.edgeCount,
      roots: rootKindTotals(program, graph),
      rootsNotScanned: {allocatorBytes: graph.roots.excluded.allocator, deadStackBytes: graph.roots.excluded.deadStack},
      rootsHow: graph.roots.how,
      typedObjects: types.typed,
      unreachable: unreachableTotals(heap, reachable, UNREACHED),
      /** Unreferenced allocations of TCMalloc itself (the MallocExtension singleton): not counted as leaked. */
      allocatorInternal: unreachableTotals(heap, reachable, ALLOCATOR_INTERNAL),
      types: types.names.length,
      warnings: graph.warnings.total,
    },
    /** Live objects and bytes named, by the tier that named them (naming/). */
    names: namingSummary(heapObjects(heap), LIVE, naming),
    warnings: reportWarnings([heap.warnings, graph.warnings, namingWarnings(naming)], heap.crossCheck, missingModuleWarnings(program, heap.module.loaded), new Map(damage.touchedFigures.filter(t => t.inFlight).map(t => [t.property, t.why]))),
    /** Broken free lists and who broke them, the crash, threads inside TCMalloc and its locks held (heap-damage.ts). */
    damage,
  }
}

export type HeapSummary = ReturnType<typeof heapSummary>

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
        ? program.core.threads.length * REGISTER_NAMES.length * 8
        : graph.roots.ranges.reduce((n, r) => n + (r.kind === k ? r.end - r.start : 0), 0),
  }))
}

/** Live objects whose reachability is `which` (UNREACHED: the leak total): count and bytes. */
function unreachableTotals(heap: TcmallocHeap, reachable: Uint8Array, which: number) {
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
