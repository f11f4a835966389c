import type {Program} from '../program/program.js'
import type {HeapModel} from '../heap/heap-model.js'
import {LIVE} from '../heap/states.js'
import {reverseEdges, scanGraphRoots, scanObjects, type FoundRoots, type GraphFacts, type ObjectScan, type RootScan, type ScanOptions} from '../graph/scan.js'
import {markAllocatorInternal} from '../graph/allocator-internal.js'
import {dominatorPassOnWorker} from '../dominators/dominator-job.js'
import type {ForwardEdges, ReverseEdges} from '../dominators/dominators.js'
import {startRetention, type PendingRetention} from '../dominators/retention.js'
import {reachableFromParents, reachableFromRoots, shortestPathParents} from '../graph/reachability.js'
import {heapArrays} from './model-stage.js'
import type {ArrayStore, StoreAction} from '../store/array-store.js'
import {edgeCacheBytes, readCacheBytes, roomUnder, type MemoryLimit} from '../store/memory-limit.js'
import {reverseBytes, reverseInPasses} from '../graph/reverse-passes.js'
import type {FileArray} from '../util/file-array.js'
import {ParkedArray} from '../util/parked-array.js'
import {inFrameOfItsOwn} from '../store/frame.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'

/**
 * The arrays the graph phases make and read, by name (the index's name where the index keeps
 * it), and their other results. The store (store/array-store.ts) holds them between phases.
 */
export interface GraphArrays {
  /** Per object slot + 1: its first edge (in the index being written while the reverse pass runs). */
  'edge.outStart': Uint32Array | FileArray
  /** In the index through the paths and the DFS where the memory limit holds them no more (forwardInFile). */
  'edge.to': Uint32Array | FileArray
  'edge.checkpoint': Uint32Array
  'edge.checkpointOffset': Float64Array
  liveLookup: ObjectScan['lookup']
  'edge.inStart': Uint32Array | FileArray
  'edge.inEdge': Uint32Array
  'edge.inFrom': Uint32Array | FileArray
  /** Memory no one reads any more, for the dominator pass's DFS arrays (the reverse edge ids', once written). */
  dominatorMemory: Uint32Array
  'root.kind': Uint8Array
  'root.thread': Int32Array
  'root.address': Float64Array
  'root.to': Uint32Array
  'root.toOffset': Uint32Array
  'object.parent': Uint32Array
  'object.reachable': Uint8Array
  /** The reachable bits in a scratch file while the dominator pass runs on this thread under the limit (read back for the summary). */
  reachableParked: ParkedArray<Uint8Array>
  'object.liveBefore': Uint32Array
  /** TCMalloc's own allocations (allocator-internal.ts), found by the model stage. */
  ownObjects: Uint32Array
  /** Whether the scan joined the targets in the index (the memory limit held not both outStart and them): they come back after the roots. */
  targetsInIndex: boolean
  /** What the summary reads of the scans. */
  scanFacts: Omit<ObjectScan, 'lookup' | 'firstWords' | 'outStart' | 'outTo' | 'checkpointEdge' | 'checkpointOffset'>
  rootFacts: Pick<RootScan, 'rootCount' | 'offsetOverflows' | 'roots'>
  reverseThreads: number
  /** Passes the reverse edges were built in (more than one under a memory limit: reverse-passes.ts). */
  reversePasses: number
  /**
   * Whether the forward edges stay in the index through the shortest paths and the dominator
   * pass's DFS, read through block caches (graph/forward-edges.ts): where the memory limit does not
   * hold them beside the DFS's arrays.
   */
  forwardInFile: boolean
  /** The retention analysis once started (the caller lets its worker go, come what may). */
  retention: PendingRetention
  /** Whether the dominator pass runs on a worker thread. */
  dominatorsOnWorker: boolean
}

/** With the heap model's arrays that go to the index with the graph's. */
export type GraphStoreArrays = GraphArrays & {[K in (typeof HEAP_AND_GRAPH)[number]]: ArrayBufferView}

export type GraphStore = ArrayStore<GraphStoreArrays>

/** What the graph phases are run with. */
export interface GraphContext {
  program: Program
  heap: HeapModel
  scan: ScanOptions & {progress?: ProgressUpdate}
  /** Where roots live, found before the scan (the naming tiers read them beside it). */
  roots: FoundRoots
  workers: number
  /** What the phases may hold at once (the reverse edges go to the index in passes where they would pass it). */
  memory: MemoryLimit
  /** Whether the dominator pass may run on a worker beside this thread's phases (the memory limit holds both). */
  dominatorsBeside: boolean
  /**
   * Whether the dominator pass takes a worker once this thread's phases are done, though the
   * phases had one thread (the names' worker holds the other processor until then).
   */
  dominatorsAfter?: boolean
  /** false: reachability only (analyze-core.ts: RunOptions.retention). */
  retention: boolean
  /** The index being written: the dominator pass's scratch file goes beside it under a tight limit. */
  indexPath: string
}

/** One step of the analysis: a plain function from the store's named arrays to named arrays, and what the store does with them after it. */
export interface Phase<A extends object> {
  name: string
  run: (store: ArrayStore<A>) => Partial<A> | void
  after?: readonly StoreAction<keyof A & string>[]
}

/** The arrays of the heap model and the graph that go to the index after the shortest paths (in this order). */
const HEAP_AND_GRAPH = [
  'span.record',
  'span.start',
  'span.pages',
  'span.sizeClass',
  'span.location',
  'span.refcount',
  'span.sampled',
  'span.objectSize',
  'span.firstObject',
  'span.objectCount',
  'span.slotStates',
  'object.state',
  'object.liveBefore',
  'threadCache.objects',
  'threadCache.owner',
  'edge.checkpoint',
  'edge.checkpointOffset',
  'root.kind',
  'root.thread',
  'root.address',
  'root.to',
  'root.toOffset',
  'sample.span',
  'sample.requestedSize',
  'sample.stackStart',
  'sample.pc',
  'sample.order',
] as const

/**
 * The phases that need the reference graph's edges: the scan, roots, the reverse edges, the start
 * of the retention analysis, shortest paths and reachability, and the graph's index arrays. Each
 * array goes to the index as soon as it exists and leaves memory as soon as no later phase reads
 * it, before the next phase allocates (peak memory is what big cores run out of): the forward edges
 * right after the scan (the reverse pass reads outStart back from there), the scan's lookup tables
 * after the roots, the reverse graph and its edge ids before the dominator pass allocates (edges keep
 * no offsets: queries find them again in the core, edge-words.ts), and the edges themselves once
 * the dominator pass has them.
 */
export function graphPhases(c: GraphContext): Phase<GraphStoreArrays>[] {
  const {program, heap} = c
  const n = heap.spans.totalObjects
  const progress = c.scan.progress
  return [
    {
      name: 'scan objects',
      run: s => {
        // The model stage read the first words: the scan keeps none (c.scan.firstWords).
        // Its garbage (some 100 MiB of V8's heap at 30 M slots) goes first where the room left
        // does not hold outStart and two edges a slot: else it stays until a collection somewhere
        // in the scan, as late as its peak in some runs (measured: 576 to 611 MiB under 512M).
        if (roomUnder(c.memory) < 12 * n) s.collect()
        // Under a limit the edge blocks copied into one array are collected as the copy goes,
        // where the room left does not hold the rest of it.
        const releaseBlocks = (bytesLeft: number) => {
          if (roomUnder(c.memory) < bytesLeft) s.collect()
        }
        // Finished ranges' targets wait in a scratch file beside the index where the room left
        // falls below a sixteenth of the limit, and the rest where it does not hold the join:
        // then the join reads them back once the workers, their read buffers and the scan's
        // garbage are gone (edge-spill.ts).
        // Where the room left does not hold the join either, outStart goes to the index and the
        // targets are joined there (outStart before them, as the actions below would write them).
        const targetsInIndex = (outStart: Uint32Array, edgeCount: number) => {
          s.put({'edge.outStart': outStart})
          s.apply({write: 'edge.outStart'})
          return s.reserve('edge.to', edgeCount)
        }
        const room = {room: () => roomUnder(c.memory), collect: () => s.collect(), margin: c.memory.bytes / 16, beside: c.indexPath, targetsInIndex}
        const {outStart, outTo, checkpointEdge, checkpointOffset, firstWords: _none, lookup, ...facts} = scanObjects(program, heap, {...c.scan, releaseBlocks, room})
        return {'edge.outStart': outStart, 'edge.to': outTo, 'edge.checkpoint': checkpointEdge, 'edge.checkpointOffset': checkpointOffset, liveLookup: lookup, scanFacts: facts, targetsInIndex: !(outTo instanceof Uint32Array)}
      },
      // The forward edges go to the index at once, on the writer thread, while this thread scans
      // the roots and names types: the writer is done with them (and lets them go) long before the
      // dominator pass's DFS, their last reader, ends. outStart leaves memory: the reverse pass
      // reads it in the index, and it comes back once the reverse graph has left memory.
      after: [{write: 'edge.outStart'}, {write: 'edge.to'}, {spill: 'edge.outStart'}],
    },
    {
      // The roots before the reverse pass, so that the scan's lookup tables are gone before it
      // allocates: then only the shortest paths run on this thread beside the dominator pass.
      name: 'roots',
      run: s => {
        const {rootCount, offsetOverflows, roots, rootKind, rootThread, rootAddress, rootTo, rootToOffset} = scanGraphRoots(program, heap, s.get('liveLookup'), s.get('scanFacts').warnings, c.scan, c.roots)
        return {'root.kind': rootKind, 'root.thread': rootThread, 'root.address': rootAddress, 'root.to': rootTo, 'root.toOffset': rootToOffset, rootFacts: {rootCount, offsetOverflows, roots}}
      },
      // Where the targets were joined in the index, they come back for the reverse edges once
      // outStart is written and out of memory.
      after: [{drop: ['liveLookup']}, {if: 'targetsInIndex', then: [{readBack: 'edge.to', after: ['edge.outStart']}]}],
    },
    {
      name: 'reverse edges',
      run: s => {
        const outTo = s.get('edge.to') as Uint32Array
        const edgeCount = outTo.length
        // Decided before the reverse graph allocates: outStart back in memory (4 bytes a slot) and
        // the DFS's arrays (12 bytes a slot) or the paths' parents (4) beside the targets held now.
        const forwardInFile = 4 * (n + 1) + (c.retention ? 12 : 4) * n > roomUnder(c.memory)
        if (reverseBytes(n, edgeCount) > roomUnder(c.memory)) {
          // Under the memory limit: in passes, straight to their places in the index (the store's
          // write actions below then have nothing to do).
          progress?.('reverse edges (in passes)', 0, 1)
          const into = {inFrom: s.reserve('edge.inFrom', edgeCount), inStart: s.reserve('edge.inStart', n + 1), inEdge: s.reserve('edge.inEdge', edgeCount)}
          const {passes, threads} = reverseInPasses(n, s.get('edge.outStart'), outTo, edgeCount, c.scan.threads ?? 1, into, () => roomUnder(c.memory), () => s.collect())
          return {reverseThreads: threads, reversePasses: passes, forwardInFile}
        }
        const {inStart, inEdge, inFrom, threads} = reverseEdges(n, s.get('edge.outStart'), outTo, edgeCount, c.scan)
        return {'edge.inStart': inStart, 'edge.inEdge': inEdge, 'edge.inFrom': inFrom, reverseThreads: threads, reversePasses: 1, forwardInFile}
      },
      after: [
        // The reverse graph goes to the index at once, on the writer thread, inFrom first (its
        // memory goes once it is written), while this thread writes the reverse edge ids; their
        // memory is then free for the dominator pass's DFS arrays.
        {write: 'edge.inFrom'},
        {write: 'edge.inStart'},
        {writeAndReuse: 'edge.inEdge', as: 'dominatorMemory'},
        // The reverse graph leaves memory once written: the dominator pass reads it back from the
        // index, once, in order, after its DFS (4 bytes an edge and 4 bytes an object slot, gone
        // before the DFS and this thread's next phases allocate). Then outStart comes back, or
        // under a tight limit the targets go too.
        ...((c.retention ? [{spill: 'edge.inFrom'}, {spill: 'edge.inStart'}] : [{forget: ['edge.inFrom', 'edge.inStart']}]) as StoreAction<keyof GraphStoreArrays & string>[]),
        {if: 'forwardInFile', then: [{spill: 'edge.to'}, {collect: true}], else: [{readBack: 'edge.outStart', after: ['edge.inFrom', 'edge.inStart']}]},
      ],
    },
    {
      // The dominator pass is the analysis's longest phase: on a worker thread it starts as soon as
      // the graph exists, and the shortest paths and the graph's index arrays run beside it (the
      // store keeps the forward edges for them). On this thread it runs after them.
      name: 'dominators beside',
      run: s => {
        const onWorker = c.retention && c.dominatorsBeside && dominatorPassOnWorker({forward: {edges: forward(s, c.memory)}, reverse: {edges: reverse(s)}}, c.workers)
        // Memory for the pass's DFS arrays (none where the reverse edges went to the index in
        // passes): on this thread the pass allocates its own.
        const memory = s.has('dominatorMemory') ? s.take('dominatorMemory') : undefined
        if (!onWorker) return {dominatorsOnWorker: false}
        const retention = startRetention({...retentionInput(s), forward: {edges: forward(s, c.memory)}, reverse: s.holder({inStart: 'edge.inStart', inFrom: 'edge.inFrom'}) as {edges: ReverseEdges}, memory}, c.workers, progress)
        return {dominatorsOnWorker: true, retention}
      },
      // This thread's hold on the reverse graph, before the next phase allocates.
      after: [{collect: true}],
    },
    {
      // The shortest paths before the graph's index arrays: their parents (4 bytes a slot, for a
      // second) are then gone before the dominator pass's DFS ends and its larger steps allocate.
      name: 'paths from roots',
      run: s => {
        const {outStart, outTo, cacheBytes} = forward(s, c.memory)
        if (!c.retention) {
          progress?.('reachability', 0, 1)
          return {'object.reachable': reachableFromRoots(n, outStart, outTo, s.get('root.to'), undefined, {cacheBytes})}
        }
        progress?.('paths from roots', 0, 1)
        // In shared memory the index writer's thread writes the parents while this one goes on.
        return {'object.parent': shortestPathParents(n, outStart, outTo, s.get('root.to'), new SharedArrayBuffer(4 * n), undefined, {cacheBytes})}
      },
      // Queries read the parents in the index; no later phase needs them.
      after: c.retention ? [{write: 'object.parent'}] : [],
    },
    {
      name: 'reachable',
      run: s => (c.retention ? {'object.reachable': reachableFromParents(s.get('object.parent'))} : undefined),
      // The search's arrays, while the dominator pass is still allocating.
      after: [{drop: ['object.parent']}],
    },
    {
      // TCMalloc's own unreferenced allocations (the MallocExtension singleton, google/tcmalloc's proxies of sampled objects) are not the program's leak.
      name: 'allocator internal',
      run: s => {
        const {outStart, outTo} = forward(s, c.memory)
        markAllocatorInternal(s.take('ownObjects'), s.get('object.reachable'), forward(s, c.memory))
      },
    },
    {
      // The heap model and the rest of the graph, while the dominator pass runs: on the writer
      // thread where an array is shared, so that this thread goes on at once.
      name: 'heap and graph arrays',
      run: () => heapArrays(heap),
      after: HEAP_AND_GRAPH.map(name => ({write: name})),
    },
    {
      // On this thread the dominator pass comes last, holding the edges alone (in holders the
      // store hands over): they go after its DFS.
      name: 'dominators here',
      run: s => {
        if (!c.retention || s.get('dominatorsOnWorker')) return
        // Where the limit holds no thread beside this one, what the pass does not read goes before
        // it allocates: the core's read cache (the names, after it, fill it again), and the
        // reachable bits (1 byte a slot), which wait in a scratch file beside the index for the summary.
        if (!c.dominatorsBeside) {
          program.core.dropReadCache(readCacheBytes(c.memory))
          s.put({reachableParked: inFrameOfItsOwn(() => new ParkedArray(s.take('object.reachable'), c.indexPath))})
          s.collect()
        }
        const input = retentionInput(s)
        const edges = {forward: {edges: {...(s.holder({outStart: 'edge.outStart', outTo: 'edge.to'}).edges as ForwardEdges), cacheBytes: edgeCacheBytes(c.memory)}}, reverse: s.holder({inStart: 'edge.inStart', inFrom: 'edge.inFrom'}) as {edges: ReverseEdges}}
        // On this thread where the limit does not hold a worker's pass beside it (then the
        // retained sizes can keep to the limit too: retention.ts).
        return {retention: startRetention({...input, ...edges}, c.dominatorsBeside ? Math.max(c.workers, c.dominatorsAfter ? 2 : 1) : 1, progress)}
      },
    },
  ]

  function retentionInput(s: GraphStore) {
    return {
      graph: {objectCount: n, rootTo: s.get('root.to'), rootThread: s.get('root.thread')},
      reverseReleased: s.writtenFlag('edge.inFrom'),
      // The heap's states say which slots are live (shared: the dominator worker reads them).
      live: heap.state,
      liveValue: LIVE,
      threads: program.core.threads.map(t => t.tid),
      collect: () => s.collect(),
      room: () => roomUnder(c.memory),
      scratchBeside: c.indexPath,
    }
  }
}

/** The forward edges, lent (in memory, or in the index with what their block caches may hold). */
function forward(s: GraphStore, memory: MemoryLimit): ForwardEdges {
  return {outStart: s.get('edge.outStart'), outTo: s.get('edge.to'), cacheBytes: edgeCacheBytes(memory)}
}

/** The reverse graph, lent (in memory or in the index). */
function reverse(s: GraphStore): ReverseEdges {
  return {inStart: s.get('edge.inStart'), inFrom: s.get('edge.inFrom')}
}

/** The graph without its edges, for the summary and the root regions (the edges are gone by then). */
export function graphFacts(s: GraphStore, objectCount: number): GraphFacts {
  const {scanThreads, edgeCount, unreadableObjects, scannedObjects, scannedBytes, freePointers, warnings} = s.get('scanFacts')
  const {rootCount, offsetOverflows, roots} = s.get('rootFacts')
  return {
    objectCount,
    edgeCount,
    rootCount,
    rootKind: s.get('root.kind'),
    rootThread: s.get('root.thread'),
    rootAddress: s.get('root.address'),
    rootTo: s.get('root.to'),
    rootToOffset: s.get('root.toOffset'),
    unreadableObjects,
    scannedObjects,
    scannedBytes,
    freePointers,
    offsetOverflows,
    warnings,
    roots,
    scanThreads,
    reverseThreads: s.get('reverseThreads'),
  }
}
