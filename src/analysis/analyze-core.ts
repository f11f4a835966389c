import os from 'node:os'
import {IndexWriter} from '../index/index-file.js'
import {defaultIndexPath} from '../index/index-location.js'
import type {IndexMeta} from '../index/index-meta.js'
import {openProgram} from '../program/open-program.js'
import type {Program} from '../program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../tcmalloc/heap.js'
import {heapSummary, type HeapSummary} from './heap-summary.js'
import {scanHeapGraph, type AnalysedGraph, type IndexOnlyEdgeArray, type ScannedGraph} from '../graph/scan.js'
import {nameObjects, type ObjectTypes} from '../graph/object-types.js'
import {TypeNamer} from '../graph/types.js'
import {analysisInputs, type AnalysisOptions} from './analysis-inputs.js'
import {startRetention} from '../graph/retention.js'
import {reachableFromParents, reachableFromRoots, shortestPathParents} from '../graph/reachability.js'
import {sharedUint8} from '../util/shared-arrays.js'
import {collectGarbage} from '../util/collect-garbage.js'
import {liveBeforeBlocks} from './object-ids.js'
import {heapObjects} from '../tcmalloc/heap.js'
import {LIVE} from '../tcmalloc/object-states.js'

import {parseRootKinds} from '../graph/root-kinds.js'
import {allocatorObjects, markAllocatorInternal} from '../graph/allocator-internal.js'
import {rootRegions} from '../graph/root-regions.js'
import {sightingTable} from '../index/sighting-index.js'
import {deadFrameSightings} from './threads.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'

export type {AnalysisOptions}

export interface Analysis {
  program: Program
  heap: TcmallocHeap
  types: ObjectTypes
  summary: HeapSummary
  indexPath: string
  /** Threads the analysis ran on (2 when the dominator pass ran beside the main thread). */
  threadsUsed: number
  /** Threads the object scan ran on. */
  scanThreads: number
  /** Threads the reverse edges were built on. */
  reverseThreads: number
}

type Progress = ProgressUpdate

/** How the analysis runs (not what it answers: the index does not record these). */
export interface RunOptions {
  /** Threads to use; 1 runs every phase on the calling thread. Default: 2 when the machine has two cores or more. */
  workers?: number
  /**
   * false: reachability only, no shortest-path parents, dominators or retained sizes (an index
   * queries cannot use). Only for `npm run bench`, which measures what the retention analysis adds.
   */
  retention?: boolean
}

export function defaultWorkers(): number {
  return Math.min(2, os.availableParallelism())
}

/**
 * Opens the core (unless the caller has it open with these options), models the heap, and writes
 * the index at `indexPath` (default: beside the core); returns everything for reporting.
 *
 * The index is written as the phases finish, so each phase can drop what only the index needs
 * before the next one grows (peak memory is what big cores run out of): the edge offsets go to
 * disk before the reverse pass allocates, the reverse edge ids before the dominator pass does;
 * the rest is written by the main thread while the dominator pass runs on a worker. The object
 * scan runs on `workers` threads.
 */
export function analyzeCore(corePath: string, options: AnalysisOptions, progress?: Progress, indexPath = defaultIndexPath(corePath), opened?: Program, run: RunOptions = {}): Analysis {
  const program = opened ?? openProgram(corePath, options)
  const workers = Math.max(1, Math.floor(run.workers ?? defaultWorkers()))
  const rootKinds = typeof options.roots === 'string' ? parseRootKinds(options.roots) : undefined
  const heap = analyzeHeap(program, {tcmallocVersion: options['tcmalloc-version'], progress})
  // The heap model's list walks filled the read cache; the scan reads in large pieces past it.
  program.core.dropReadCache()
  const writer = new IndexWriter(indexPath)
  try {
    const {pending, types, reachable, summary, regions, scanThreads, reverseThreads} = graphPhases(program, heap, writer, workers, run, rootKinds, progress)
    // The graph's arrays are garbage on this thread now (the dominator worker drops its references
    // once its pass is done): freed before the retained sizes allocate.
    collectGarbage()
    // Leads found once here, beside the dominator pass: each needs the threads unwound and libc's
    // thread descriptors, too slow for every query.
    progress?.('returned frames', 0, 1)
    const objects = heapObjects(heap)
    const sightings = sightingTable(deadFrameSightings(program, addr => objects.findObject(addr)))
    writer.addAll(sightings.arrays)
    progress?.('writing index', 0, 1)
    writer.addAll({'object.type': types.typeOf, 'object.reachable': reachable})
    const retention = pending?.finish({shallowBytes: shallowBytes(heap), typeOf: types.typeOf, typeCount: types.names.length + 1}, progress)
    progress?.('writing index', 0, 1)
    if (retention) writer.addAll({
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
    })
    writer.add('thread.tid', Int32Array.from(program.core.threads, t => t.tid))
    const meta: IndexMeta = {
      inputs: analysisInputs(program, options),
      pageSize: heap.pageSize,
      summary,
      moduleWarnings: summary.warnings.list.filter(w => w.phase === 'modules'),
      sizeClassSizes: Array.from(heap.globals.sizes.size),
      threadCaches: heap.threadCaches.map(c => ({address: c.address, tid: c.tid})),
      typeNames: types.names,
      rootRegions: regions,
      accumulations: retention?.accumulations ?? [],
      samplePeriod: heap.sampled.period,
      sightingFrames: sightings.frames,
    }
    writer.finish(meta)
    return {program, heap, types, summary, indexPath, threadsUsed: Math.max(scanThreads, reverseThreads, pending?.parallel ? 2 : 1), scanThreads, reverseThreads}
  } catch (e) {
    writer.abandon()
    throw e
  }
}

/**
 * The phases that need the reference graph: the scan, types, the start of the retention analysis,
 * the graph's index arrays, shortest paths, reachability and the summary. The graph lives only
 * in here, so that its arrays (24 bytes or more per object slot) are garbage once it returns,
 * before the retention analysis's last phase allocates: the analysis's peak memory.
 */
function graphPhases(program: Program, heap: TcmallocHeap, writer: IndexWriter, workers: number, run: RunOptions, rootKinds: ReadonlySet<number> | undefined, progress?: Progress) {
  // The arrays only the index needs go to it as soon as each exists, before the next pass allocates.
  const handOff = (name: IndexOnlyEdgeArray, pieces: Uint32Array[]) => {
    progress?.('writing index', 0, 1)
    writer.addPieces(name, pieces)
  }
  const scanned: {firstWords: Float64Array | null} = {firstWords: null}
  const graph = analysedGraph(scanHeapGraph(program, heap, {progress, rootKinds, threads: workers, handOff}), scanned)
  const live = liveSlots(heap)
  // Types first: the objects' first words (8 bytes per object slot) are then dropped before the
  // dominator pass allocates, which keeps them off the analysis's peak memory.
  const types = nameObjects(scanned.firstWords!, new TypeNamer(program), progress)
  const ownObjects = allocatorObjects(heap, scanned.firstWords!, types)
  scanned.firstWords = null
  collectGarbage() // what the scan released and the first words, before the dominator pass allocates
  // The dominator pass first (on a worker thread when allowed); the rest of the graph's index
  // arrays and the shortest paths beside it.
  const pending = run.retention === false ? null : startRetention({graph, live, threads: program.core.threads.map(t => t.tid)}, workers, progress)
  writeHeapAndGraph(writer, heap, graph, progress)
  const reachable = run.retention === false ? reachability(graph, progress) : writeShortestPaths(writer, graph, progress)
  // TCMalloc's own unreferenced allocations (the MallocExtension singleton) are not the program's leak.
  markAllocatorInternal(ownObjects, reachable, graph.outStart, graph.outTo)
  progress?.('summary', 0, 1)
  const summary = heapSummary(program, heap, graph, types, reachable)
  return {pending, types, reachable, summary, regions: rootRegions(graph), scanThreads: graph.scanThreads, reverseThreads: graph.reverseThreads}
}

/**
 * The graph without the arrays the scan handed to the index (edge offsets, reverse edge ids), and
 * with the objects' first words moved to `scanned`, so the caller can drop them once types are
 * named (the graph object itself goes on to the dominator pass and to the caller).
 */
function analysedGraph(graph: ScannedGraph, scanned: {firstWords: Float64Array | null}): AnalysedGraph {
  const {outOffset: _offset, outToOffset: _toOffset, inEdge: _inEdge, firstWords, ...rest} = graph
  scanned.firstWords = firstWords
  return rest
}

/** The heap model and the rest of the graph (written while the dominator pass runs). */
function writeHeapAndGraph(writer: IndexWriter, heap: TcmallocHeap, graph: AnalysedGraph, progress?: Progress): void {
  progress?.('writing index', 0, 1)
  const s = heap.spans
  writer.addAll({
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
    'object.liveBefore': liveBeforeBlocks(heap.state),
    'threadCache.objects': heap.threadCacheObjects,
    'threadCache.owner': heap.threadCacheOwner,
    'edge.outStart': graph.outStart,
    'edge.to': graph.outTo.subarray(0, graph.edgeCount),
    'edge.inStart': graph.inStart,
    'edge.inFrom': graph.inFrom,
    'root.kind': graph.rootKind,
    'root.thread': graph.rootThread,
    'root.address': graph.rootAddress,
    'root.to': graph.rootTo,
    'root.toOffset': graph.rootToOffset,
    'sample.span': heap.sampled.span,
    'sample.requestedSize': heap.sampled.requestedSize,
    'sample.stackStart': heap.sampled.stackStart,
    'sample.pc': heap.sampled.pc,
    'sample.order': heap.sampled.order,
  })
}

/**
 * Shortest-path parents from the roots, written to the index at once and dropped (queries read
 * them from there; no later phase needs them); returns reachability.
 */
function writeShortestPaths(writer: IndexWriter, graph: AnalysedGraph, progress?: Progress): Uint8Array {
  progress?.('paths from roots', 0, 1)
  const parent = shortestPathParents(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
  writer.add('object.parent', parent)
  return reachableFromParents(parent)
}

/** Reachability alone (the bench's analysis without retention). */
function reachability(graph: AnalysedGraph, progress?: Progress): Uint8Array {
  progress?.('reachability', 0, 1)
  return reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
}

/** 1 for each live slot (shared: the dominator worker reads it). */
function liveSlots(heap: TcmallocHeap): Uint8Array {
  const live = sharedUint8(heap.spans.totalObjects)
  heapObjects(heap).forEachObject(id => {
    live[id] = 1
  }, LIVE)
  return live
}

/** Each live object's own bytes (0 for other slots). */
function shallowBytes(heap: TcmallocHeap): Float64Array {
  const bytes = new Float64Array(heap.spans.totalObjects)
  heapObjects(heap).forEachObject((id, _start, size) => {
    bytes[id] = size
  }, LIVE)
  return bytes
}
