import os from 'node:os'
import {BackgroundWrites} from '../index/background-writes.js'
import {IndexWriter} from '../index/index-file.js'
import {HeapIndex} from '../index/heap-index.js'
import {storedHolders, WHOLE_WALK_BYTES_PER_SLOT, type Have, type ThroughBlocks} from '../queries/holder-groups.js'
import {countNames} from '../queries/name-counts.js'
import type {ArrayName} from '../index/schema.js'
import {defaultIndexPath} from '../util/index-location.js'
import type {IndexMeta} from '../index/index-meta.js'
import {openProgram} from '../program/open-program.js'
import type {Program} from '../program/program.js'
import {modelHeap} from '../allocators.js'
import type {HeapModel} from '../heap/heap-model.js'
import {heapSummary, type HeapSummary} from '../queries/heap-summary.js'
import {heapArrays, modelStage, type ModelStage} from './model-stage.js'
import {STAGE_NAMES, type Stage} from '../index/schema.js'
import {thisProcess, type ProcessIdentity} from '../util/process-identity.js'
import {TypeNamer} from '../graph/types.js'
import {analysisInputs, type AnalysisOptions} from './analysis-inputs.js'
import type {RetainedBytes, RetentionArrays} from '../dominators/retention.js'
import type {ObjectTypes} from '../graph/object-types.js'
import {ArrayStore} from '../store/array-store.js'
import {graphFacts, graphPhases, type GraphStoreArrays, type GraphStore} from './graph-phases.js'
import {sharedFloat64} from '../util/shared-arrays.js'
import {defaultMemoryLimit, edgeCacheBytes, readCacheBytes, roomUnder, type MemoryLimit} from '../store/memory-limit.js'
import {collectGarbage} from '../store/collect-garbage.js'
import {inFrameOfItsOwn} from '../store/frame.js'
import {ParkedArray} from '../util/parked-array.js'
import {heapObjects} from '../heap/objects.js'
import {LIVE} from '../heap/states.js'

import {parseRootKinds} from '../graph/root-kinds.js'
import {nameHeap, type NamingResult} from '../naming/name-heap.js'
import type {Recogniser} from '../naming/recogniser.js'
import {nameHeapOnWorker, type PendingNaming} from '../naming/naming-job.js'
import {findRoots, type FoundRoots} from '../graph/scan.js'
import {fitsRequest} from '../heap/request-fit.js'
import {conflictLine} from '../naming/object-names.js'
import {VIA_LABELS} from '../naming/via.js'
import type {NamingMeta} from '../index/index-meta.js'
import {rootRegions} from '../graph/root-regions.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'
import type {CheckpointRule} from '../graph/edge-words.js'

export type {AnalysisOptions}

/** What the analysis did to keep to its memory limit (analyze --json: memory). */
export interface MemoryFacts {
  /** Passes the reverse edges were built in. */
  reversePasses: number
  /** The forward edges stayed in the index through the walks. */
  forwardInFile: boolean
  /** The object scan's ranges whose targets waited in a scratch file. */
  scanRangesSpilled: number
  /** The scan's targets were joined in the index, not in memory, and came back after the roots. */
  scanTargetsInIndex: boolean
  /** The dominator pass's parent[] waited in its scratch file through the semidominator loop. */
  dominatorParentParked: boolean
  /** The type ids waited in a scratch file through the retained sizes and the holder walk. */
  typeIdsParked: boolean
}

export interface Analysis {
  program: Program
  heap: HeapModel
  types: ObjectTypes
  summary: HeapSummary
  indexPath: string
  /**
   * Threads the analysis kept busy at once, at most (2 when the dominator pass ran beside the main
   * thread's phases; a thread that only waits for another's result does not count).
   */
  threadsUsed: number
  /** Threads the object scan ran on. */
  scanThreads: number
  /** Threads the reverse edges were built on. */
  reverseThreads: number
  /** Whether the naming tiers ran on a worker thread of their own, beside the graph phases. */
  namingOnWorker: boolean
  /** Whether the dominator pass ran on a worker thread, beside this thread's phases. */
  dominatorsOnWorker: boolean
  /** The stages the index holds (schema.ts STAGES). */
  stages: Stage[]
  /**
   * The memory limit it ran under, the passes the reverse edges took under it (1: all at once), and
   * whether the forward edges stayed in the index through the paths and the DFS.
   */
  memory: MemoryLimit & MemoryFacts
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
  /** The last stage to run (schema.ts STAGES); the model stage's index is written first either way. Default: 'graph'. */
  stage?: Stage
  /** Called once the model stage's index is in place (before the graph stage, when it runs). */
  modelWritten?: () => void
  /** What the analysis may hold at once (default: memory-limit.ts's share of the memory available). */
  memoryLimit?: MemoryLimit
  /**
   * The naming tiers (default: all, recognisers.ts). Only tests swap them, to reach a tier's rare
   * paths; the tiers then run on this thread (a naming worker takes the default ones).
   */
  recognisers?: readonly Recogniser[]
}

/**
 * The naming tiers and the dominator pass take threads of their own, beside this thread's phases,
 * only where the memory limit holds what that costs: the naming worker loads the program again
 * and keeps its own copies of the names, and the dominator pass's arrays live beside this
 * thread's. A whole analysis so run peaked at 1103 MiB for 24 M object slots (46 B a slot; 946
 * MiB on one thread), on the bench core (BENCHMARKS.md, issue 33).
 */
const BESIDE_BYTES_PER_SLOT = 46

/** Every processor this process may run on. */
export function defaultWorkers(): number {
  return os.availableParallelism()
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
  const memory = run.memoryLimit ?? defaultMemoryLimit()
  const heap = modelHeap(program, {version: options['tcmalloc-version'], progress})
  // The heap model's list walks filled the read cache; the first words and the scan read in large
  // pieces past it. From here on it holds a share of the memory limit at most.
  program.core.dropReadCache(readCacheBytes(memory))
  const namer = new TypeNamer(program)
  // The naming tiers, where they take a thread of their own, start as soon as the vtable types are
  // known: beside the rest of the model stage (its summary and index), not after it.
  const early: {names?: NamesBeside} = {}
  const typesKnown = (run.stage ?? 'graph') === 'graph' ? (vtableTypes: ObjectTypes) => (early.names = namesBeside(program, heap, vtableTypes, run.recognisers ? 1 : workers, memory, progress)) : undefined
  try {
    // In a frame of its own: what only the model's index needs (its names) goes before the graph stage.
    const first = inFrameOfItsOwn(() => modelStageIndexed(program, heap, namer, options, indexPath, workers, memory, run, progress, typesKnown))
    if ('analysis' in first) return first.analysis
    return graphStage(program, heap, namer, first.model, options, first.graph, workers, memory, run, early.names ?? namesBeside(program, heap, first.model.vtableTypes, run.recognisers ? 1 : workers, memory, progress), progress)
  } catch (e) {
    early.names?.naming?.release()
    throw e
  }
}

/** The roots, found before the scan, and the naming tiers where they run on a worker of their own beside the rest (else null: on this thread, after the graph phases). */
interface NamesBeside {
  roots: FoundRoots
  naming: PendingNaming | null
}

/**
 * With more than one thread, the naming tiers take one of their own (they are the graph stage's
 * longest single-threaded part) from the moment the vtable types are known, and the scan, the
 * reverse edges and the dominator pass the rest; only where the limit holds what that costs.
 * (Started beside the model stage's first words instead, they were 11 % slower on the bench core:
 * BENCHMARKS.md, issue 33.)
 */
function namesBeside(program: Program, heap: HeapModel, vtableTypes: ObjectTypes, workers: number, memory: MemoryLimit, progress?: Progress): NamesBeside {
  progress?.('roots', 0, 1)
  const roots = findRoots(program, heap)
  const naming = workers > 1 && besideFits(memory, heap) ? nameHeapOnWorker(program, heapObjects(heap), LIVE, roots.set.ranges, vtableTypes, heap.requestFit()) : null
  return {roots, naming}
}

/** Whether the memory limit holds the naming worker and the dominator pass's worker beside this thread's phases. */
function besideFits(memory: MemoryLimit, heap: HeapModel): boolean {
  return memory.bytes >= BESIDE_BYTES_PER_SLOT * heap.spans.totalObjects
}

/** What the graph stage takes of the model stage. */
type ModelForGraph = Pick<ModelStage, 'vtableTypes' | 'ownObjects' | 'sightings'>

/**
 * The model stage and its index, written first: queries that need only the model answer from it
 * while the graph is built. Returns the analysis where the model is the last stage, else what the
 * graph stage needs and its index writer.
 */
function modelStageIndexed(program: Program, heap: HeapModel, namer: TypeNamer, options: AnalysisOptions, indexPath: string, workers: number, memory: MemoryLimit, run: RunOptions, progress?: Progress, typesKnown?: (vtableTypes: ObjectTypes) => void): {analysis: Analysis} | {model: ModelForGraph; graph: ReturnType<typeof graphWriter>} {
  const model = modelStage(program, heap, namer, progress, typesKnown)
  const lastStage = run.stage ?? 'graph'
  // The graph stage's temporary is there before the model's index: while this process runs and
  // it is there, a query that needs the graph waits for this analysis (open-index.ts).
  const graph = lastStage === 'graph' ? graphWriter(indexPath, workers, run) : null
  try {
    progress?.('writing index', 0, 1)
    writeModelIndex(indexPath, program, heap, options, model, graph ? thisProcess() : null)
  } catch (e) {
    graph?.writer.abandon()
    graph?.background?.close()
    throw e
  }
  run.modelWritten?.()
  if (!graph) {
    return {analysis: {program, heap, types: model.types, summary: model.summary, indexPath, threadsUsed: 1, scanThreads: 0, reverseThreads: 0, namingOnWorker: false, dominatorsOnWorker: false, stages: ['model'], memory: {...memory, reversePasses: 0, forwardInFile: false, scanRangesSpilled: 0, scanTargetsInIndex: false, dominatorParentParked: false, typeIdsParked: false}}}
  }
  return {model: {vtableTypes: model.vtableTypes, ownObjects: model.ownObjects, sightings: model.sightings}, graph}
}

/** The graph stage's index writer, and the thread that writes its last arrays while the last phases run. */
function graphWriter(indexPath: string, workers: number, run: RunOptions): {writer: IndexWriter; background: BackgroundWrites | null} {
  const background = workers > 1 && run.retention !== false ? BackgroundWrites.start() : null
  try {
    return {writer: new IndexWriter(indexPath, background), background}
  } catch (e) {
    background?.close()
    throw e
  }
}

/** The model stage's index: the heap model's arrays, the names by vtable, the returned frames, no graph. */
function writeModelIndex(indexPath: string, program: Program, heap: HeapModel, options: AnalysisOptions, model: ModelStage, graphUnderWay: ProcessIdentity | null): void {
  const writer = new IndexWriter(indexPath)
  try {
    const types = model.types
    writer.addAll(heapArrays(heap))
    writer.addAll(model.sightings.arrays)
    writer.addAll({'object.type': types.typeOf, 'object.via': model.naming.names.via})
    writer.addAll(countNames(heapObjects(heap), types.typeOf, model.naming.names.via, heap.spans.sizeClass, types.names.length + 1))
    writer.add('thread.tid', threadIds(program))
    const meta: IndexMeta = {
      ...indexMeta(program, heap, options, model.summary, model.naming, model.sightings.frames),
      rootRegions: [],
      accumulations: [],
      ...(graphUnderWay ? {graphUnderWay} : {}),
    }
    writer.finish(meta, ['model'])
  } catch (e) {
    writer.abandon()
    throw e
  }
}

/** The meta's fields both stages' indexes fill alike. */
function indexMeta(program: Program, heap: HeapModel, options: AnalysisOptions, summary: HeapSummary, naming: NamingResult, sightingFrames: IndexMeta['sightingFrames']) {
  const types = naming.names
  return {
    inputs: analysisInputs(program, options),
    pageSize: heap.pageSize,
    summary,
    moduleWarnings: summary.warnings.list.filter(w => w.phase === 'modules'),
    sizeClassSizes: Array.from(heap.sizeClassSizes),
    threadCaches: heap.threadCaches.map(c => ({address: c.address, tid: c.tid, ...(c.cpu !== undefined && c.cpu !== null ? {cpu: c.cpu} : {})})),
    typeNames: types.names,
    typeKinds: types.kinds,
    naming: namingMeta(naming),
    samplePeriod: heap.sampled.period,
    sightingFrames,
  }
}

const threadIds = (program: Program) => Int32Array.from(program.core.threads, t => t.tid)

/**
 * The graph stage: the pointer scan, roots, reverse edges, reachability, every naming tier and the
 * dominators, written as the whole index in place of the model stage's.
 */
function graphStage(
  program: Program,
  heap: HeapModel,
  namer: TypeNamer,
  model: ModelForGraph,
  options: AnalysisOptions,
  {writer, background}: ReturnType<typeof graphWriter>,
  workers: number,
  memory: MemoryLimit,
  run: RunOptions,
  {roots, naming}: NamesBeside,
  progress?: Progress,
): Analysis {
  const indexPath = writer.path
  const rootKinds = typeof options.roots === 'string' ? parseRootKinds(options.roots) : undefined
  const store: GraphStore = new ArrayStore<GraphStoreArrays>(writer, () => progress?.('writing index', 0, 1))
  let parked: ReturnType<typeof parkedTypes> | null = null
  let idsParked: ReturnType<typeof parkedIds> | null = null
  try {
    const retain = run.retention !== false
    store.put({ownObjects: model.ownObjects})
    const objects = heapObjects(heap)
    const beside = besideFits(memory, heap)
    // Where the names run on this thread after the graph phases because the limit holds no thread
    // beside them, the vtable tier's type ids (2 or 4 bytes an object slot, which none of those
    // phases reads) wait in a scratch file through them.
    parked = naming === null && !beside ? parkedTypes(model, indexPath) : null
    // The graph phases take the threads the names leave. Where that is one, the dominator pass
    // still takes a worker once this thread's phases are done: this thread then only waits for the
    // names, and once they are in, sums up and walks the dominator tree beside the pass's worker,
    // not after it.
    const threads = naming ? workers - 1 : workers
    const dominatorsAfter = naming !== null && threads < 2
    for (const phase of graphPhases({program, heap, scan: {progress, rootKinds, threads, checkpoints: run.checkpoints, firstWords: false}, roots, workers: threads, memory, dominatorsBeside: beside, dominatorsAfter, retention: retain, indexPath})) store.run(phase.run, phase.after)
    const pending = store.has('retention') ? store.get('retention') : null
    const reversePasses = store.get('reversePasses')
    const forwardInFile = store.get('forwardInFile')
    const scanRangesSpilled = store.get('scanFacts').spilledRanges
    const graph = graphFacts(store, heap.spans.totalObjects)
    // The edges are garbage on this thread now (the dominator worker drops its references once its
    // pass is done): freed before the dominator pass's predecessor copy grows.
    store.drop('edge.outStart', 'edge.to')
    // This thread's share of that copy, before the summary: the copy is on the pass's critical
    // path, while the summary and the steps below fill the wait for its semidominators. Not while
    // the names' worker holds the other processor (the pass's worker has the rest of them): then
    // the copy is left to the pass, and this thread waits for the names.
    if (!dominatorsAfter) pending?.help()
    // In a frame of its own: the names' other arrays and the reachable bits are written and out of
    // memory before the retained sizes allocate (under a memory limit they would not fit beside).
    const {types, summary, namesMeta} = inFrameOfItsOwn(() => {
      // The other tiers' names, beside the dominator pass (which needs the type ids only at its end).
      progress?.('names', 0, 1)
      const names = naming ? naming.finish() : nameHeap(program, objects, LIVE, namer, roots.set.ranges, parked ? parked.take() : model.vtableTypes, fitsRequest(heap.requestFit()), run.recognisers)
      const types = names.names.asTypes()
      progress?.('summary', 0, 1)
      const reachable = store.has('reachableParked') ? store.take('reachableParked').take() : store.get('object.reachable')
      const summary = heapSummary(program, heap, {facts: graph, reachable}, types, names)
      // Leads the model stage found (each needs the threads unwound and libc's thread descriptors, too slow for every query).
      writer.addAll(model.sightings.arrays)
      progress?.('writing index', 0, 1)
      writer.addAll({'object.type': types.typeOf, 'object.via': names.names.via, 'object.reachable': reachable})
      // What classes and top --by type count over every live object, counted here once.
      writer.addAll(countNames(objects, types.typeOf, names.names.via, heap.spans.sizeClass, types.names.length + 1))
      store.drop('object.reachable')
      return {types, summary, namesMeta: indexMeta(program, heap, options, summary, names, model.sightings.frames)}
    })
    const regions = rootRegions(graph)
    const {scanThreads, reverseThreads} = graph
    const n = heap.spans.totalObjects
    // The per-object arrays' places, in the index's order: the retention hands them off as each is
    // final, not always in that order (retention.ts: finish).
    if (pending) {
      writer.keepPlace('object.idom', 'u32', n)
      writer.keepPlace('object.retainedBytes', 'f64', n)
      writer.keepPlace('object.retainedObjects', 'u32', n)
    }
    // The core is read no more here: its read cache goes before the retained sizes allocate.
    program.core.dropReadCache()
    // Each per-object array goes to the writer thread as soon as it is final.
    const retentionArrays: Record<keyof RetentionArrays, ArrayName> = {
      idom: 'object.idom',
      retainedBytes: 'object.retainedBytes',
      retainedObjects: 'object.retainedObjects',
      childStart: 'dom.childStart',
      child: 'dom.child',
    }
    const handOff = (arrays: Partial<RetentionArrays>): void => {
      for (const [key, a] of Object.entries(arrays)) {
        // Retained bytes summed in 4 bytes (under a memory limit, where they fit) go to the index as its f64s.
        if (key === 'retainedBytes' && a instanceof Uint32Array) writer.addWidened('object.retainedBytes', a)
        else writer.addBehind(retentionArrays[key as keyof RetentionArrays], a)
      }
    }
    // Where the room left does not hold the child lists and a sum (12 bytes a slot) beside the type
    // ids, the ids wait in a scratch file beside the index through the retained sizes (the sums
    // never read them), the tree walk reads them there through a cache of blocks, and they come
    // back after the holder walk, which reads them in the index through a cache where it reads
    // its other columns so, or before it. (In a frame of its own: this one's registers would keep them.)
    idsParked = pending && !pending.parallel && roomUnder(memory) < (12 + types.typeOf.BYTES_PER_ELEMENT) * n ? inFrameOfItsOwn(() => parkedIds(types, indexPath)) : null
    if (idsParked) collectGarbage()
    const idsRead = idsParked?.blocks(edgeCacheBytes(memory))
    const typeAt = idsRead && ((o: number): number => idsRead.at(o))
    let retention = pending?.finish(narrow => ({shallowBytes: shallowBytes(heap, narrow), typeOf: types.typeOf, typeCount: types.names.length + 1, ...(typeAt ? {typeAt} : {})}), progress, handOff)
    idsRead?.close()
    const facts: MemoryFacts = {reversePasses, forwardInFile, scanRangesSpilled, scanTargetsInIndex: store.get('targetsInIndex'), dominatorParentParked: retention?.parentParked ?? false, typeIdsParked: idsParked !== null}
    const idsBack = (): void => {
      if (idsParked) types.typeOf = idsParked.take().typeOf
      idsParked = null
    }
    progress?.('writing index', 0, 1)
    if (retention) writer.addAll({
      'dom.leakStarts': retention.leakStarts,
      'dom.top': retention.top,
      'type.retainedBytes': retention.typeRetainedBytes,
      'type.retainedObjects': retention.typeRetainedObjects,
      'thread.retainedBytes': retention.threadRetainedBytes,
      'thread.retainedObjects': retention.threadRetainedObjects,
    })
    writer.add('thread.tid', threadIds(program))
    const meta: IndexMeta = {
      ...namesMeta,
      rootRegions: regions,
      accumulations: retention?.accumulations ?? [],
    }
    if (retention) {
      // Under a limit that does not hold the walk's columns whole beside what the analysis holds,
      // the dominator tree and the retained bytes go (they are in the index), and the walk reads
      // them and the rest through caches (holder-groups.ts), holding its outputs and little else.
      const blocks = roomUnder(memory) < WHOLE_WALK_BYTES_PER_SLOT * n ? {cacheBytes: edgeCacheBytes(memory)} : undefined
      if (!blocks) idsBack()
      const have = blocks === undefined ? {childStart: retention.childStart, child: retention.child, retainedBytes: retention.retainedBytes, types: types.typeOf} : idsParked ? {} : {types: types.typeOf}
      retention = undefined
      holdersOnce(program, writer, meta, have, blocks, progress)
    }
    // The holder walk's outputs are written: their memory goes before the ids come back.
    if (idsParked) collectGarbage()
    idsBack()
    writer.finish(meta, STAGE_NAMES)
    return {program, heap, types, summary, indexPath, threadsUsed: Math.max(scanThreads, reverseThreads, pending?.parallel && !dominatorsAfter ? 2 : 1) + (naming ? 1 : 0), scanThreads, reverseThreads, namingOnWorker: naming !== null, dominatorsOnWorker: pending?.parallel ?? false, stages: [...STAGE_NAMES], memory: {...memory, ...facts}}
  } catch (e) {
    writer.abandon()
    // A failed index write (a full disk) comes first: a phase that read the index back failed for it.
    throw writer.writeFailure() ?? e
  } finally {
    // A worker still waiting for its share of the analysis (an error came first) is let go.
    if (store.has('retention')) store.get('retention').release()
    if (store.has('reachableParked')) store.get('reachableParked').remove()
    naming?.release()
    parked?.remove()
    idsParked?.remove()
    background?.close()
  }
}

/**
 * The holder walk (queries/holder-groups.ts), run once here on the index so far, as a query would
 * have run it on the whole index: its results go into the index, and no query walks the dominator
 * tree again (issue 52: find-object on an untyped object took seconds).
 */
function holdersOnce(program: Program, writer: IndexWriter, meta: IndexMeta, have: Have, blocks: ThroughBlocks | undefined, progress?: Progress): void {
  progress?.('holders', 0, 1)
  const index = new HeapIndex(writer.readSoFar(meta, STAGE_NAMES))
  let found: ReturnType<typeof storedHolders>
  try {
    index.useCore(program.core.memory, program.core.path)
    // Through caches: what the analysis let go (the writer thread, drained by readSoFar, held some of it) is freed first.
    if (blocks) collectGarbage()
    // The dominator tree, the retained bytes and the type ids this analysis holds are the index's: not read twice.
    found = storedHolders(program, index, have, blocks)
  } finally {
    index.close()
  }
  progress?.('writing index', 0, 1)
  writer.addAll({'object.holder': found.holderOf, 'object.holderOffset': found.entryOffset, 'holder.table': found.table})
}

/**
 * The vtable tier's type ids parked in a scratch file beside the index (parked-array.ts), and the
 * rest of its types; `model` is left holding the types without their ids, so that nothing holds
 * those in memory until they are taken back.
 */
function parkedTypes(model: ModelForGraph, beside: string): {take(): ObjectTypes; remove(): void} {
  const {typeOf, ...rest} = model.vtableTypes
  const ids = new ParkedArray(typeOf, beside)
  model.vtableTypes = {...rest, typeOf: new Uint16Array(0)}
  return {take: () => ({...rest, typeOf: ids.take()}), remove: () => ids.remove()}
}

/**
 * The type ids of `types` parked in a scratch file beside the index (parked-array.ts), `types`
 * left holding none until they are taken back.
 */
function parkedIds(types: ObjectTypes, beside: string) {
  const ids = new ParkedArray(types.typeOf, beside)
  types.typeOf = new Uint16Array(0)
  return {take: () => ({typeOf: ids.take()}), blocks: (cacheBytes: number) => ids.blocks(cacheBytes), remove: () => ids.remove()}
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
 * Each live object's own bytes (0 for other slots), span by span: one size per span. Shared: it
 * becomes the retained sizes, which the index writer's thread writes. `narrow`: in 4 bytes a slot
 * where the live objects' bytes total less than 2^32 (then no subtree's sum passes it either), not
 * shared (the sums over the child lists run on this thread, and the writer widens them).
 */
function shallowBytes(heap: HeapModel, narrow: boolean): RetainedBytes {
  const n = heap.spans.totalObjects
  const {firstObject, objectCount, objectSize} = heap.spans
  const state = heap.state
  let total = 0
  if (narrow) {
    for (let s = 0; s < firstObject.length; s++) {
      let live = 0
      for (let o = firstObject[s]!, end = o + objectCount[s]!; o < end; o++) if (state[o] === LIVE) live++
      total += live * objectSize[s]!
    }
  }
  const bytes = narrow && total < 2 ** 32 ? new Uint32Array(n) : sharedFloat64(n)
  for (let s = 0; s < firstObject.length; s++) {
    const size = objectSize[s]!
    for (let o = firstObject[s]!, end = o + objectCount[s]!; o < end; o++) if (state[o] === LIVE) bytes[o] = size
  }
  return bytes
}
