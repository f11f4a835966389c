import os from 'node:os'
import {BackgroundWrites} from '../index/background-writes.js'
import {IndexWriter} from '../index/index-file.js'
import {defaultIndexPath} from '../index/index-location.js'
import type {IndexMeta} from '../index/index-meta.js'
import {openProgram} from '../program/open-program.js'
import type {Program} from '../program/program.js'
import {modelHeap} from '../allocators.js'
import type {HeapModel} from '../heap/heap-model.js'
import {heapSummary, type HeapSummary} from './heap-summary.js'
import {scanHeapGraph, type AnalysedGraph, type IndexOnlyEdgeArray, type ScannedGraph} from '../graph/scan.js'
import {nameObjects, type ObjectTypes} from '../graph/object-types.js'
import {TypeNamer} from '../graph/types.js'
import {analysisInputs, type AnalysisOptions} from './analysis-inputs.js'
import {startRetention, type PendingRetention, type RetentionArrays} from '../graph/retention.js'
import {dominatorPassOnWorker} from '../graph/dominator-job.js'
import type {ForwardEdges, ReverseEdges} from '../graph/dominators.js'
import {reachableFromParents, reachableFromRoots, shortestPathParents} from '../graph/reachability.js'
import {sharedFloat64, sharedUint32} from '../util/shared-arrays.js'
import {readFileArray, type FileArray} from '../util/file-array.js'
import {collectGarbage} from '../util/collect-garbage.js'
import {liveBeforeBlocks} from './object-ids.js'
import {heapObjects} from '../heap/objects.js'
import {LIVE} from '../heap/states.js'

import {parseRootKinds} from '../graph/root-kinds.js'
import {nameHeap, type NamingResult} from '../naming/name-heap.js'
import {conflictLine} from '../naming/object-names.js'
import {VIA_LABELS} from '../naming/via.js'
import type {NamingMeta} from '../index/index-meta.js'
import {allocatorObjects, markAllocatorInternal} from '../graph/allocator-internal.js'
import {rootRegions} from '../graph/root-regions.js'
import {sightingTable} from '../index/sighting-index.js'
import {deadFrameSightings} from './threads.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'
import type {CheckpointRule} from '../graph/edge-words.js'

export type {AnalysisOptions}

export interface Analysis {
  program: Program
  heap: HeapModel
  types: ObjectTypes
  /** Every tier's names (types holds the same ids), with how each was known and what the tiers found. */
  naming: NamingResult
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
  /** Which edges keep their offset in the index (edge-words.ts); only tests narrow it. */
  checkpoints?: CheckpointRule
}

export function defaultWorkers(): number {
  return Math.min(2, os.availableParallelism())
}

/**
 * Opens the core (unless the caller has it open with these options), models the heap, and writes
 * the index at `indexPath` (default: beside the core); returns everything for reporting.
 *
 * The index is written as the phases finish, so each phase can drop what only the index needs
 * before the next one grows (peak memory is what big cores run out of): the forward edges right
 * after the scan (the reverse pass reads their ranges back from there), the reverse graph and its
 * edge ids before the dominator pass allocates (edges keep no offsets: queries find them again in
 * the core, edge-words.ts), the rest of the graph while the dominator pass runs on a worker, and
 * the pass's results while the main thread walks the dominator tree. The object scan and the
 * reverse edges run on `workers` threads.
 */
export function analyzeCore(corePath: string, options: AnalysisOptions, progress?: Progress, indexPath = defaultIndexPath(corePath), opened?: Program, run: RunOptions = {}): Analysis {
  const program = opened ?? openProgram(corePath, options)
  const workers = Math.max(1, Math.floor(run.workers ?? defaultWorkers()))
  const rootKinds = typeof options.roots === 'string' ? parseRootKinds(options.roots) : undefined
  const heap = modelHeap(program, {version: options['tcmalloc-version'], progress})
  // The heap model's list walks filled the read cache; the scan reads in large pieces past it.
  program.core.dropReadCache()
  // The index's last arrays are written on a thread of their own while the last phases run.
  const background = workers > 1 && run.retention !== false ? BackgroundWrites.start() : null
  const writer = new IndexWriter(indexPath, background)
  const started: StartedRetention = {retention: null}
  try {
    const {types: vtableTypes, namer, reachable, graph} = graphPhases(program, heap, writer, workers, run, rootKinds, started, progress)
    const pending = started.retention
    // The graph's arrays are garbage on this thread now (the dominator worker drops its references
    // once its pass is done): freed before the dominator pass's predecessor copy grows.
    collectGarbage()
    // This thread's share of that copy, before the summary: the copy is on the pass's critical
    // path, while the summary and the steps below fill the wait for its semidominators.
    pending?.help()
    // The other tiers' names, beside the dominator pass (which needs the type ids only at its end).
    progress?.('names', 0, 1)
    const objects = heapObjects(heap)
    const naming = nameHeap(program, objects, LIVE, namer, graph.roots.ranges, vtableTypes, heap.requestFit())
    const types = naming.names.asTypes()
    progress?.('summary', 0, 1)
    const summary = heapSummary(program, heap, graph, types, reachable, naming)
    const regions = rootRegions(graph)
    const {scanThreads, reverseThreads} = graph
    // Leads found once here, beside the dominator pass: each needs the threads unwound and libc's
    // thread descriptors, too slow for every query.
    progress?.('returned frames', 0, 1)
    const sightings = sightingTable(deadFrameSightings(program, addr => objects.findObject(addr)))
    writer.addAll(sightings.arrays)
    progress?.('writing index', 0, 1)
    writer.addAll({'object.type': types.typeOf, 'object.via': naming.names.via, 'object.reachable': reachable})
    // Each per-object array goes to the writer thread as soon as it is final.
    const retentionArrays: Record<keyof RetentionArrays, string> = {
      idom: 'object.idom',
      retainedBytes: 'object.retainedBytes',
      retainedObjects: 'object.retainedObjects',
      childStart: 'dom.childStart',
      child: 'dom.child',
    }
    const handOff = (arrays: Partial<RetentionArrays>): void => {
      for (const [key, a] of Object.entries(arrays)) writer.addBehind(retentionArrays[key as keyof RetentionArrays], a)
    }
    const retention = pending?.finish(() => ({shallowBytes: shallowBytes(heap), typeOf: types.typeOf, typeCount: types.names.length + 1}), progress, handOff)
    progress?.('writing index', 0, 1)
    if (retention) writer.addAll({
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
      sizeClassSizes: Array.from(heap.sizeClassSizes),
      threadCaches: heap.threadCaches.map(c => ({address: c.address, tid: c.tid})),
      typeNames: types.names,
      typeKinds: naming.names.kinds,
      naming: namingMeta(naming),
      rootRegions: regions,
      accumulations: retention?.accumulations ?? [],
      samplePeriod: heap.sampled.period,
      sightingFrames: sightings.frames,
    }
    writer.finish(meta)
    return {program, heap, types, naming, summary, indexPath, threadsUsed: Math.max(scanThreads, reverseThreads, pending?.parallel ? 2 : 1), scanThreads, reverseThreads}
  } catch (e) {
    writer.abandon()
    // A failed index write (a full disk) comes first: a phase that read the index back failed for it.
    throw writer.writeFailure() ?? e
  } finally {
    // A worker still waiting for its share of the analysis (an error came first) is let go.
    started.retention?.release()
    background?.close()
  }
}

/**
 * The phases that need the reference graph's edges: the scan, types, the start of the retention
 * analysis, the graph's index arrays, shortest paths and reachability. The edges live only in
 * here, so that their arrays (24 bytes or more per object slot) are garbage once it returns,
 * before the dominator pass's predecessor copy and the retention analysis's last phase allocate:
 * the analysis's peak memory.
 */
function graphPhases(program: Program, heap: HeapModel, writer: IndexWriter, workers: number, run: RunOptions, rootKinds: ReadonlySet<number> | undefined, started: StartedRetention, progress?: Progress) {
  // The arrays only the index needs go to it as soon as each exists, before the next pass allocates.
  const handOff = (name: IndexOnlyEdgeArray, pieces: Uint32Array[]) => {
    progress?.('writing index', 0, 1)
    writer.addPieces(name, pieces)
  }
  // Raised once the reverse graph is written to the index: the pass may then reuse its memory.
  const reverseReleased = new Int32Array(new SharedArrayBuffer(4))
  const inStartWritten = new Int32Array(new SharedArrayBuffer(4))
  // The reverse graph goes to the index as soon as it exists, on the writer thread where there is
  // one: while this thread writes the reverse edge ids.
  const reverseBuilt = (edges: ReverseEdges) => writeReverseEdges(writer, edges, reverseReleased, inStartWritten, progress)
  const scanned: Scanned = {reverse: {edges: null}, spare: null}
  // Types are named from the objects' first words (8 bytes a slot) as soon as the scan and the
  // roots are done, so that the words are gone before the reverse pass allocates.
  const namer = new TypeNamer(program)
  const named: {types: ObjectTypes; ownObjects: Uint32Array} = {types: {typeOf: new Uint16Array(0), names: [], typed: 0}, ownObjects: new Uint32Array(0)}
  const takeFirstWords = (firstWords: Float64Array) => {
    named.types = nameObjects(firstWords, namer, progress)
    named.ownObjects = allocatorObjects(heap, firstWords, named.types, program.core.memory)
  }
  // The forward edges go to the index at once, on the writer thread where there is one, while
  // this thread scans the roots and names types: the writer is done with them (and lets them go)
  // long before the dominator pass's DFS, their last reader, ends. The reverse pass reads
  // outStart there, and it comes back into memory once the reverse graph has left it.
  const outStartWritten = new Int32Array(new SharedArrayBuffer(4))
  const forwardBuilt = (outStart: Uint32Array, outTo: Uint32Array): FileArray => {
    progress?.('writing index', 0, 1)
    writer.addBehind('edge.outStart', outStart, outStartWritten)
    writer.addBehind('edge.to', outTo)
    return writer.fileArray('edge.outStart', outStartWritten)
  }
  const graph = scanGraph(() => scanHeapGraph(program, heap, {progress, rootKinds, threads: workers, handOff, forwardBuilt, reverseBuilt, checkpoints: run.checkpoints, takeFirstWords}), scanned)
  const {types, ownObjects} = named
  const reverse = scanned.reverse
  // The heap's states say which slots are live (shared: the dominator worker reads them).
  const live = {live: heap.state, liveValue: LIVE}
  const retention = run.retention !== false
  const threads = program.core.threads.map(t => t.tid)
  // The reverse graph leaves memory once it is written: the dominator pass reads it back from the
  // index, once, in order, after its DFS (4 bytes an edge and 4 bytes an object slot, gone before
  // the DFS and this thread's next phases allocate). Then outStart comes back.
  reverse.edges = retention ? {inStart: writer.fileArray('edge.inStart', inStartWritten), inFrom: writer.fileArray('edge.inFrom', reverseReleased)} : null
  if (graph.outStartFile) graph.outStart = outStartBack(writer, graph.outStartFile, [reverseReleased, inStartWritten])
  // The dominator pass is the analysis's longest phase: on a worker thread it starts as soon as the
  // graph exists, and the shortest paths and the graph's index arrays run beside it. On this
  // thread it runs after them.
  const onWorker = retention && dominatorPassOnWorker({forward: {edges: graph}, reverse}, workers)
  // Beside a worker, a holder of the pass's own: the pass empties it, the graph keeps its edges
  // for this thread's shortest paths.
  if (onWorker) started.retention = startRetention({graph, forward: {edges: forwardOf(graph)}, reverse, reverseReleased, ...live, threads, memory: scanned.spare ?? undefined}, workers, progress)
  scanned.spare = null
  // Beside a worker this thread's hold on the reverse graph's file arrays ends here; a pass on this
  // thread takes them over.
  if (onWorker) reverse.edges = null
  collectGarbage() // this thread's hold on the reverse graph, before the next phase allocates
  // The shortest paths before the graph's index arrays: their parents (4 bytes a slot, for a
  // second) are then gone before the dominator pass's DFS ends and its larger steps allocate.
  const reachable = pathsAndGraph(writer, heap, graph, ownObjects, retention, progress)
  // On this thread the dominator pass comes last, holding the edges alone: they go after its DFS.
  if (retention && !onWorker) started.retention = startRetention({graph, forward: forwardTaken(graph), reverse, reverseReleased, ...live, threads}, workers, progress)
  // The edges stay behind: the caller's next step (the dominator pass's copy) grows while they go.
  const {outStart: _outStart, outTo: _outTo, outStartFile: _outStartFile, ...facts} = graph
  return {types, namer, reachable, graph: facts}
}

/** What the index keeps of the naming pass: counts by tier, findings, inconsistencies and conflicts. */
function namingMeta(naming: NamingResult): NamingMeta {
  const {names} = naming
  return {
    namedBy: Object.fromEntries(VIA_LABELS.map((label, via) => [label, names.namedBy[via]!]).filter(([label, n]) => label !== '' && (n as number) > 0)),
    notes: naming.notes,
    warnings: naming.warnings.map(w => ({message: w.message, address: w.address})),
    conflicts: {count: names.conflictCount, examples: names.conflicts.map(conflictLine)},
  }
}

/**
 * The shortest paths (or reachability alone), TCMalloc's own objects marked, the heap model and
 * the graph's other arrays handed to the index; in a frame of its own, so that no register of
 * the caller's keeps the edges it reads.
 */
function pathsAndGraph(writer: IndexWriter, heap: HeapModel, graph: AnalysedGraph, ownObjects: Uint32Array, retention: boolean, progress?: Progress): Uint8Array {
  const reachable = retention ? writeShortestPaths(writer, graph, progress) : reachability(graph, progress)
  collectGarbage() // the search's arrays, while the dominator pass is still allocating
  // TCMalloc's own unreferenced allocations (the MallocExtension singleton) are not the program's leak.
  markAllocatorInternal(ownObjects, reachable, graph.outStart, graph.outTo)
  writeHeapAndGraph(writer, heap, graph, progress)
  return reachable
}

function forwardOf(graph: AnalysedGraph): ForwardEdges {
  return {outStart: graph.outStart, outTo: graph.outTo}
}

/**
 * The graph's edges in a holder, which the graph gives up (it keeps empty arrays in their place):
 * made in a frame of its own, so that only the holder, which the dominator pass empties after its
 * DFS, is in the caller's registers while the pass runs on this thread.
 */
function forwardTaken(graph: AnalysedGraph): {edges: ForwardEdges | null} {
  const holder = {edges: forwardOf(graph)}
  graph.outStart = NO_EDGES
  graph.outTo = NO_EDGES
  return holder
}

const NO_EDGES = new Uint32Array(0)

/** The retention analysis once graphPhases has started it (the caller lets its worker go, come what may). */
interface StartedRetention {
  retention: PendingRetention | null
}

/** What the analysis drops before the rest of the graph: the reverse graph. */
interface Scanned {
  reverse: {edges: ReverseEdges | null}
  /** Memory free for the dominator pass's DFS arrays (scan.ts: ScannedGraph.spare). */
  spare: Uint32Array | null
}

/**
 * The scanned graph through analysedGraph, in a frame of its own: the whole graph object is held
 * by no frame of the caller's (an interpreter frame's registers keep what they last held, for a
 * garbage collection too), so that each array dropped from `scanned` is freed at the next one.
 */
function scanGraph(scan: () => ScannedGraph, scanned: Scanned): AnalysedGraph {
  return analysedGraph(scan(), scanned)
}

/**
 * The graph without the arrays the scan handed on (the reverse edge ids to the index, the first
 * words to type naming), and with the reverse graph moved to `scanned`, so the caller can drop it
 * once the index and the dominator pass have it (the graph object itself goes on to the dominator
 * pass and to the caller).
 */
function analysedGraph(graph: ScannedGraph, scanned: Scanned): AnalysedGraph {
  const {inEdge: _inEdge, firstWords: _firstWords, inStart, inFrom, spare, ...rest} = graph
  scanned.reverse.edges = {inStart, inFrom}
  scanned.spare = spare
  return rest
}

/**
 * outStart read back from the index into fresh shared memory once the reverse graph has left
 * memory (its arrays written, `written`, then collected here): the two never take memory together.
 */
function outStartBack(writer: IndexWriter, file: FileArray, written: Int32Array[]): Uint32Array {
  for (const w of written) writer.awaitWritten(w)
  collectGarbage()
  return readFileArray(file, sharedUint32(file.length))
}

/** `written` and `inStartWritten` are raised once inFrom and inStart are in the index (the dominator pass reads them there). */
function writeReverseEdges(writer: IndexWriter, {inStart, inFrom}: ReverseEdges, written: Int32Array, inStartWritten: Int32Array, progress?: Progress): void {
  if (!(inFrom instanceof Uint32Array && inStart instanceof Uint32Array)) throw new Error('reverse graph written twice')
  progress?.('writing index', 0, 1)
  // inFrom first: its memory goes once it is written.
  writer.addBehind('edge.inFrom', inFrom, written)
  writer.addBehind('edge.inStart', inStart, inStartWritten)
}

/**
 * The heap model and the rest of the graph (the edges went to the index after the scan), while
 * the dominator pass runs: on the writer thread where an array is shared, so that this thread
 * goes on at once.
 */
function writeHeapAndGraph(writer: IndexWriter, heap: HeapModel, graph: AnalysedGraph, progress?: Progress): void {
  progress?.('writing index', 0, 1)
  const s = heap.spans
  const arrays = {
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
    'edge.checkpoint': graph.checkpointEdge,
    'edge.checkpointOffset': graph.checkpointOffset,
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
  }
  for (const [name, a] of Object.entries(arrays)) writer.addBehind(name, a)
}

/**
 * Shortest-path parents from the roots, written to the index at once and dropped (queries read
 * them from there; no later phase needs them); returns reachability.
 */
function writeShortestPaths(writer: IndexWriter, graph: AnalysedGraph, progress?: Progress): Uint8Array {
  progress?.('paths from roots', 0, 1)
  // In shared memory the index writer's thread writes the parents while this one goes on.
  const parent = shortestPathParents(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo, new SharedArrayBuffer(4 * graph.objectCount))
  writer.addBehind('object.parent', parent)
  return reachableFromParents(parent)
}

/** Reachability alone (the bench's analysis without retention). */
function reachability(graph: AnalysedGraph, progress?: Progress): Uint8Array {
  progress?.('reachability', 0, 1)
  return reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
}

/**
 * Each live object's own bytes (0 for other slots), span by span: one size per span. Shared: it
 * becomes the retained sizes, which the index writer's thread writes.
 */
function shallowBytes(heap: HeapModel): Float64Array {
  const bytes = sharedFloat64(heap.spans.totalObjects)
  const {firstObject, objectCount, objectSize} = heap.spans
  const state = heap.state
  for (let s = 0; s < firstObject.length; s++) {
    const size = objectSize[s]!
    for (let o = firstObject[s]!, end = o + objectCount[s]!; o < end; o++) if (state[o] === LIVE) bytes[o] = size
  }
  return bytes
}
