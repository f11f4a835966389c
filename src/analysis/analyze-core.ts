import {writeIndex} from '../index/index-file.js'
import {defaultIndexPath} from '../index/index-location.js'
import type {IndexMeta} from '../index/index-meta.js'
import {openProgram} from '../program/open-program.js'
import type {Program} from '../program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../tcmalloc/heap.js'
import {heapSummary, type HeapSummary} from './heap-summary.js'
import {scanHeapGraph, type ScannedGraph} from '../graph/scan.js'
import {nameObjects, type ObjectTypes} from '../graph/object-types.js'
import {TypeNamer} from '../graph/types.js'
import {analysisInputs, type AnalysisOptions} from './analysis-inputs.js'
import {retentionOf} from '../graph/retention.js'
import {heapObjects} from '../tcmalloc/heap.js'
import {LIVE} from '../tcmalloc/object-states.js'

import {parseRootKinds} from '../graph/root-kinds.js'
import {markAllocatorInternal} from '../graph/allocator-internal.js'
import {rootRegions} from '../graph/root-regions.js'

export type {AnalysisOptions}

export interface Analysis {
  program: Program
  heap: TcmallocHeap
  graph: ScannedGraph
  types: ObjectTypes
  summary: HeapSummary
  indexPath: string
}

type Progress = (phase: string, done: number, total: number) => void

/**
 * Opens the core (unless the caller has it open with these options), models the heap, and writes
 * the index at `indexPath` (default: beside the core); returns everything for reporting.
 */
export function analyzeCore(corePath: string, options: AnalysisOptions, progress?: Progress, indexPath = defaultIndexPath(corePath), opened?: Program): Analysis {
  const program = opened ?? openProgram(corePath, options)
  const rootKinds = typeof options.roots === 'string' ? parseRootKinds(options.roots) : undefined
  const heap = analyzeHeap(program, {tcmallocVersion: options['tcmalloc-version'], progress})
  const graph = scanHeapGraph(program, heap, {progress, rootKinds})
  const types = nameObjects(graph.firstWords, new TypeNamer(program), progress)
  const retention = retentionOf(liveObjects(program, heap, graph, types), progress)
  const reachable = retention.reachable
  // TCMalloc's own unreferenced allocations (the MallocExtension singleton) are not the program's leak.
  markAllocatorInternal(heap, graph.firstWords, types, reachable, graph.outStart, graph.outTo)
  progress?.('summary', 0, 1)
  const summary = heapSummary(program, heap, graph, types, reachable)
  const meta: IndexMeta = {
    inputs: analysisInputs(program, options),
    pageSize: heap.pageSize,
    summary,
    moduleWarnings: summary.warnings.list.filter(w => w.phase === 'modules'),
    sizeClassSizes: Array.from(heap.globals.sizes.size),
    threadCaches: heap.threadCaches.map(c => ({address: c.address, tid: c.tid})),
    typeNames: types.names,
    rootRegions: rootRegions(graph),
    samplePeriod: heap.sampled.period,
  }
  progress?.('writing index', 0, 1)
  const s = heap.spans
  writeIndex(indexPath, meta, {
    'span.record': s.record,
    'span.start': s.start,
    'span.pages': s.pages,
    'span.sizeClass': s.sizeClass,
    'span.location': s.location,
    'span.refcount': s.refcount,
    'span.sampled': s.sampled,
    'span.objectSize': s.objectSize,
    'span.firstObject': s.firstObject,
    'span.objectCount': s.objectCount,
    'object.state': heap.state,
    'threadCache.objects': heap.threadCacheObjects,
    'threadCache.owner': heap.threadCacheOwner,
    'object.type': types.typeOf,
    'object.reachable': reachable,
    'edge.outStart': graph.outStart,
    'edge.to': graph.outTo.subarray(0, graph.edgeCount),
    'edge.offset': graph.outOffset.subarray(0, graph.edgeCount),
    'edge.toOffset': graph.outToOffset.subarray(0, graph.edgeCount),
    'edge.inStart': graph.inStart,
    'edge.inEdge': graph.inEdge.subarray(0, graph.edgeCount),
    'edge.inFrom': graph.inFrom,
    'root.kind': graph.rootKind,
    'root.thread': graph.rootThread,
    'root.address': graph.rootAddress,
    'root.to': graph.rootTo,
    'root.toOffset': graph.rootToOffset,
    'object.parent': retention.parent,
    'object.idom': retention.idom,
    'object.retainedBytes': retention.retainedBytes,
    'object.retainedObjects': retention.retainedObjects,
    'dom.childStart': retention.childStart,
    'dom.child': retention.child,
    'dom.leakStarts': retention.leakStarts,
    'dom.top': retention.top,
    'type.retainedBytes': retention.typeRetainedBytes,
    'type.retainedObjects': retention.typeRetainedObjects,
    'thread.retainedBytes': retention.threadRetainedBytes,
    'thread.retainedObjects': retention.threadRetainedObjects,
    'thread.tid': Int32Array.from(program.core.threads, t => t.tid),
    'sample.span': heap.sampled.span,
    'sample.requestedSize': heap.sampled.requestedSize,
    'sample.stackStart': heap.sampled.stackStart,
    'sample.pc': heap.sampled.pc,
    'sample.order': heap.sampled.order,
  })
  return {program, heap, graph, types, summary, indexPath}
}

/** The retention analysis's input: which slots are live, and each live object's own bytes. */
function liveObjects(program: Program, heap: TcmallocHeap, graph: ScannedGraph, types: ObjectTypes) {
  const n = heap.spans.totalObjects
  const live = new Uint8Array(n)
  const shallowBytes = new Float64Array(n)
  heapObjects(heap).forEachObject((id, _start, size) => {
    live[id] = 1
    shallowBytes[id] = size
  }, LIVE)
  return {graph, live, shallowBytes, typeOf: types.typeOf, typeCount: types.names.length + 1, threads: program.core.threads.map(t => t.tid)}
}
