/**
 * The dominator tree of the heap graph, by semi-NCA (Georgiadis, Tarjan and Werneck, "Finding
 * Dominators in Practice", 2006): a Lengauer–Tarjan semidominator pass with path compression,
 * then immediate dominators as nearest common ancestors along the DFS tree. Iterative, over the
 * CSR arrays, with flat typed arrays only (no JS object per vertex), as viewcore's dominator.go.
 *
 * One virtual root points to every root target and to the starting points of the leaked graph,
 * so one pass gives both trees: reachable objects are dominated within the reachable graph, and
 * leaked objects within the leaked graph (edges between the two parts are ignored: a leaked object
 * pointing at a reachable one does not retain it). A leaked starting point is a leaked object that
 * no other leaked object reaches, one per leaked cycle that nothing outside the cycle points to
 * (chap's "unreferenced"); those are found as the sources of the leaked graph's condensation.
 */

import {firstAtOrAbove} from '../util/search.js'
import {newUint32, sharedUint32} from '../util/shared-arrays.js'
import {awaitSignal} from '../util/await-signal.js'
import {readFileArray, Uint32Reader, type FileArray} from '../util/file-array.js'
import {inFrameOfItsOwn} from '../store/frame.js'
import {forwardReaders, type ForwardEdges} from '../graph/forward-edges.js'
import {Uint32Blocks} from '../util/block-cache.js'
import {ScratchFile} from '../util/scratch-file.js'

import {BY_GROUP, BY_VIRTUAL_ROOT, NOT_IN_TREE, groupOfIdom} from './dominator-ids.js'
import type {RetainedBytes} from './accumulation.js'

export {BY_GROUP, BY_VIRTUAL_ROOT, NOT_IN_TREE, groupOfIdom}

export type {ForwardEdges}

/**
 * The reverse CSR: sources of the incoming edges of o are inFrom[inStart[o] .. inStart[o+1]).
 * Either may be in a file instead (the index, where the analysis has written it): the pass reads
 * each once, in order, so that their memory (4 bytes an edge, 4 bytes an object slot) can go
 * before the pass's largest steps.
 */
export interface ReverseEdges {
  inStart: Uint32Array | FileArray
  inFrom: Uint32Array | FileArray
}

/** Edges in a holder the dominator pass empties (edges = null) once it has read them. */
export interface EdgeHolder<T> {
  edges: T | null
}

export interface DominatorInput {
  objectCount: number
  /**
   * The edges, each direction in a holder the pass empties as soon as it has read it: the
   * out-edges after the DFS, the reverse graph after the pass's own copy of the predecessor lists.
   * What the pass's caller holds through these holders alone (12 bytes per object slot each way)
   * is then freed before the pass's largest arrays exist.
   */
  forward: EdgeHolder<ForwardEdges>
  reverse: EdgeHolder<ReverseEdges>
  /**
   * Word 0 is 1 once the caller reads the reverse graph no more (it has written it to the index
   * and dropped it): the pass may then write over inFrom's memory, where the link-eval forest goes
   * when it fits, instead of into fresh memory. Absent or 0: the pass only reads the reverse graph.
   */
  reverseReleased?: Int32Array
  /**
   * Memory no one else reads or writes, for the DFS's vertex[] and parent[] (4 bytes a live
   * object each) where it has room for both, instead of fresh memory. Shared when the pass runs
   * on a worker thread.
   */
  memory?: Uint32Array
  /** Root targets, sorted ascending (as the graph stores them). */
  rootTo: Uint32Array
  /** Per object slot, `liveValue` (default 1) for live objects. (Which of them a root reaches, the DFS from the roots finds.) */
  live: Uint8Array
  liveValue?: number
  /**
   * Per root (parallel to rootTo): its group, or −1. Each group is a pseudo-vertex between the
   * virtual root and the targets of its roots, so an object only one thread's roots reach is
   * dominated by that thread's group, and the group's retained size is what only that thread holds.
   */
  rootGroup?: Int32Array
  groupCount?: number
  /**
   * The array store's collection (store/array-store.ts), called where the pass has let arrays go,
   * so that their memory is freed before its next step allocates (nothing else would collect this
   * thread's heap in time); none where absent.
   */
  collect?: () => void
  /**
   * Bytes this process may still allocate (a memory limit), where the pass runs on the main
   * thread: where the link-eval forest does not fit beside pre[], pre[] goes first. Absent: no limit.
   */
  room?: () => number
  /**
   * Objects per piece of the predecessor copy, as a power of two (default 16: 65536). Tests make
   * it small, so that a fixture's few thousand objects make many pieces.
   */
  copyPieceShift?: number
  /**
   * A file whose folder may take a scratch file of the pass's own (util/scratch-file.ts), where the
   * room left (`room`) does not hold the predecessor lists beside the link-eval forest: the lists
   * are then copied to it in ranges of preorder numbers and read back through a block cache, and
   * vertex[] waits there while the forest exists. Absent: they stay in memory.
   */
  scratchBeside?: string
  /** Elements the copy to the scratch file holds in memory at once, at least (tests make it small). */
  scratchWords?: number
}

export interface DominatorTree {
  /** Per object: its immediate dominator's index, BY_VIRTUAL_ROOT, or NOT_IN_TREE. */
  idom: Uint32Array
  /** Leaked objects that start the leaked graph, ascending. */
  leakStarts: Uint32Array
  /** Objects in the tree, in DFS preorder: a dominator comes before everything it dominates. */
  preorder: Uint32Array
  groupCount: number
  /** Whether parent[] waited in the pass's scratch file through the semidominator loop (a memory limit). */
  parentParked: boolean
}

const NONE = 0xffff_ffff
/** An array dropped: what a field holds once its memory is let go. */
const NO_WORDS = new Uint32Array(0)
const NO_BYTES = new Uint8Array(0)
/** pre[] value of an object the DFS must not enter (free, or in the other part of the graph). */
const OUTSIDE = 0xffff_ffff

/**
 * `shared`: idom (and the arrays left in `spare`) in shared memory, so that a worker thread and
 * the main thread can both read it. `spare` receives the working array that is free once the
 * pass returns (the DFS parents), for the child lists to reuse.
 * `pastPeak` is called once the pass's memory is past its largest: the semidominators known, the
 * predecessor copy, semi[] and the link-eval forest released and collected.
 *
 * Each array lives only through the steps that read it, so that the pass's peak memory stays low
 * (it runs beside the main thread's own phases): the reverse graph only until the predecessor
 * copy exists; the link-eval forest (8 bytes a vertex) is allocated after it. Memory is reused
 * rather than freed and allocated again where an array is free when the next one of its size is
 * needed: the DFS numbering (pre[], 4 bytes an object slot) becomes idom, and the reverse graph's
 * inFrom, where it is in memory, the forest once the caller has released it (`reverseReleased`);
 * where inFrom is in a file, its memory went before the pass allocated. Fresh memory costs a page
 * fault per 4 KiB on first write, about 2.7 ms per MB on the VM the benchmarks run on, against some
 * 0.1 ms to clear memory in hand.
 */
export function dominatorTree(g: DominatorInput, shared = false, spare: Uint32Array[] = [], pastPeak = (): void => {}, helper?: (copy: PredecessorCopy) => void): DominatorTree {
  const n0 = g.objectCount
  const groups = g.groupCount ?? 0
  if (n0 + groups >= BY_GROUP) throw new RangeError(`${n0} objects: too many for 32-bit dominator ids`)
  const numbering = inFrameOfItsOwn(() => numbered(g, groups, shared))
  const count = numbering.count
  // The out-edges (12 bytes an object slot) go before pre[] (4 bytes a slot) is allocated, where
  // this thread held them alone (the pass on the main thread); a worker's caller drops its own later.
  g.collect?.()
  let scratch: ScratchFile | null = null
  try {
    // Under a memory limit, only where no helper shares the copy (a helper copies into memory).
    const scratchBeside = helper || g.room === undefined ? undefined : g.scratchBeside
    const scratchFile = (beside: string): ScratchFile => (scratch ??= new ScratchFile(beside))
    // Where the room left does not hold pre[] (4 bytes an object slot) beside vertex[] and then
    // the forest, vertex[] waits in the scratch file from now until the forest is gone (where it
    // has memory of its own: not the caller's, shared with parent[]); pre[] is numbered reading
    // it back in order.
    // (In a frame of its own: this one's registers would keep vertex[] through the collection.)
    const vertexParked = inFrameOfItsOwn(() => (scratchBeside !== undefined && g.room!() < 4 * n0 + 8 * count ? parkedVertex(numbering, () => scratchFile(scratchBeside)) : null))
    if (vertexParked) g.collect?.()
    numberObjectsAll(numbering, g, n0, shared, vertexParked)
    // The lists in memory, or where the room left does not hold them with the forest, in the scratch file.
    const placeLists = (words: number): Uint32Array | FileArray => {
      if (scratchBeside === undefined || g.room!() >= 4 * words + 8 * count) return newUint32(words, shared)
      return scratchFile(scratchBeside).reserve(words)
    }
    // The scratch file made so far, or (`create`) made now where the pass may have one.
    const scratchNow = (create = false): ScratchFile | null => (create && scratchBeside !== undefined ? scratchFile(scratchBeside) : scratch)
    return treeFromNumbering(g, numbering, n0, groups, shared, spare, pastPeak, placeLists, scratchNow, vertexParked, helper)
  } finally {
    ;(scratch as ScratchFile | null)?.remove()
  }
}

/** The rest of the pass, once the DFS has numbered the objects. */
function treeFromNumbering(g: DominatorInput, numbering: Numbering, n0: number, groups: number, shared: boolean, spare: Uint32Array[], pastPeak: () => void, placeLists: (words: number) => Uint32Array | FileArray, scratchFile: (create?: boolean) => ScratchFile | null, vertexParked: FileArray | null, helper?: (copy: PredecessorCopy) => void): DominatorTree {
  const count = numbering.count
  let reverse: ReverseEdges | null = taken(g.reverse)
  let copy: PredecessorCopy | null = predecessorCopy(reverse, numbering, shared, g.copyPieceShift, placeLists)
  // The helper starts on the copy at once.
  helper?.(copy)
  // The out-edges where a caller held them too (the pass on a worker: the caller drops its own
  // while the DFS runs): this thread's hold goes as the copy starts filling its lists. The
  // collection right after the DFS, above, came before the caller's drop and left them resident
  // through the copy there (measured at scale 24: 272 MiB).
  g.collect?.()
  const scratch = scratchFile()
  const listsInFile = !(copy.lists instanceof Uint32Array)
  if (listsInFile) copyPredecessorsToFile(copy, scratch!, g.scratchWords)
  else {
    copyPredecessors(copy)
    awaitCopied(copy)
  }
  // Where the lists went to the scratch file, vertex[] waits there too while the forest exists
  // (where it has memory of its own: not the caller's, shared with parent[]), if not there already.
  let vertex = numbering.vertex
  const vertexInFile = vertexParked ?? (listsInFile && vertex.buffer !== numbering.parent.buffer ? scratch!.write(vertex) : null)
  if (vertexInFile) vertex = numbering.vertex = NO_WORDS
  const inFrom = reverse.inFrom
  const forestMemory = inFrom instanceof Uint32Array && g.reverseReleased && Atomics.load(g.reverseReleased, 0) === 1 && inFrom.length >= 2 * count ? inFrom.subarray(0, 2 * count) : null
  reverse = null
  // pre[] is read no more; its memory holds idom once the semidominators are known, unless the
  // room left (a memory limit) does not hold the forest beside it: then it goes first, and idom
  // takes fresh memory once the forest is gone.
  const keepPre = !forestMemory && g.room !== undefined && g.room() < 8 * count ? null : numbering.pre!
  if (!keepPre) copy.pre = NO_WORDS
  const idomMemory = keepPre
  numbering.pre = null
  // Frees this thread's hold on the edges (their memory goes once the other thread drops them
  // too; inFrom's may live on as the forest), and vertex[] where it went to the file, before the
  // forest allocates: nothing else would collect in time.
  g.collect?.()
  // Where the room left does not hold the forest with a margin of half as much again (a memory
  // limit), parent[] (4 bytes a vertex, in memory of its own) waits in the scratch file through
  // the semidominator loop, which reads it in order, backwards, through a block cache; the climb
  // below takes it back once the forest is gone.
  // (In a frame of its own: this one's registers would keep parent[] through the collection.)
  const parentInFile = inFrameOfItsOwn(() => (!forestMemory && !numbering.borrowed && g.room !== undefined && g.room() < 12 * count ? parkedParent(numbering, copy!, scratchFile(true)) : null))
  if (parentInFile) g.collect?.()
  // In a frame of its own where parent[] comes back: this one's registers would keep the forest
  // through the collection before it.
  inFrameOfItsOwn(() => semidominators(numbering, copy!, g, groups, forestMemory ?? newUint32(2 * count, shared), parentInFile ?? numbering.parent))
  copy = null
  if (parentInFile) {
    g.collect?.()
    numbering.parent = readFileArray(parentInFile, newUint32(parentInFile.length, shared))
  }

  // In a frame of its own: this one's registers would keep semi[] through the collection below.
  inFrameOfItsOwn(() => climbToDominators(numbering))
  const idomPre = numbering.parent
  // The copy, semi[] and the link-eval forest, before the caller allocates beside the pass and the
  // child lists are built. (The forest, 8 bytes a vertex, is not kept for the child lists: their
  // starts take 4 bytes an object slot, and the rest of it stayed resident, unused, to the end.)
  g.collect?.()
  pastPeak()
  if (vertexInFile) vertex = numbering.vertex = readFileArray(vertexInFile, newUint32(vertexInFile.length, shared))
  const idom = (idomMemory ?? newUint32(n0, shared)).fill(NOT_IN_TREE)
  for (let w = 1; w < count; w++) {
    const o = vertex[w]!
    if (o >= n0) continue
    const d = idomPre[w]!
    idom[o] = d === 0 ? BY_VIRTUAL_ROOT : vertex[d]! >= n0 ? BY_GROUP - (vertex[d]! - n0) : vertex[d]!
  }
  // Then compacted in place (a second pass: the first reads vertex[] at lower positions): objects only, still in preorder.
  let objects = 0
  for (let w = 1; w < count; w++) if (vertex[w]! < n0) vertex[objects++] = vertex[w]!
  spare.push(numbering.parent)
  return {idom, leakStarts: numbering.leakStarts, preorder: vertex.subarray(0, objects), groupCount: groups, parentParked: parentInFile !== null}
}

/**
 * Immediate dominators by preorder number: climb from the DFS parent until at or above the
 * semidominator. Written over parent[] in place (the climb from w reads only entries below w,
 * converted already); semi[] is let go.
 */
function climbToDominators(numbering: Numbering): void {
  const {parent: idomPre, semi, count} = numbering
  for (let w = 1; w < count; w++) {
    let d = idomPre[w]!
    while (d > semi[w]!) d = idomPre[d]!
    idomPre[w] = d
  }
  numbering.semi = NO_WORDS
}

/** The DFS numbering over the edges taken out of their holder (the caller runs it in a frame of its own: store/frame.ts). */
function numbered(g: DominatorInput, groups: number, shared: boolean): Numbering {
  const numbering = depthFirst(taken(g.forward), g, groups, shared, g.memory)
  g.memory = undefined
  g.live = NO_BYTES
  return numbering
}

/** The edges out of their holder, so that the pass's reference is their last. */
function taken<T>(holder: EdgeHolder<T>): T {
  const edges = holder.edges
  if (!edges) throw new Error('dominator input: edges taken already')
  holder.edges = null
  return edges
}

/** Root r's group, or −1. */
function rootGroupOf(g: DominatorInput, groups: number, r: number): number {
  const k = g.rootGroup ? g.rootGroup[r]! : -1
  return k >= 0 && k < groups ? k : -1
}

/** The DFS numbering of every vertex in the tree, by preorder number (0: the virtual root). */
interface Numbering {
  /** Per object: its preorder number, or OUTSIDE for a slot that is not live. Null once read. */
  pre: Uint32Array | null
  /** Per preorder number: the object, or objectCount + group for a root group. */
  vertex: Uint32Array
  /** Per preorder number: the DFS parent's preorder number. */
  parent: Uint32Array
  /** vertex[] and parent[] lie in the caller's memory (DominatorInput.memory), not memory of their own. */
  borrowed: boolean
  /** count + 1 words, free for the steps after the DFS. */
  semi: Uint32Array
  count: number
  /** Preorder numbers below it are the reachable graph's, the rest the leaked graph's. */
  reachedEnd: number
  /** Per group: its preorder number. */
  groupPre: Uint32Array
  /** The root targets' preorder numbers, ascending (with repeats). */
  rootTargets: Uint32Array
  /** Parallel to rootTargets: their objects (the semidominator loop reads no vertex[]). */
  rootTargetObjects: Uint32Array
  leakStarts: Uint32Array
}

function depthFirst(edges: ForwardEdges, g: DominatorInput, groups: number, shared: boolean, memory?: Uint32Array): Numbering {
  const {starts, targets, close} = forwardReaders(edges)
  try {
    return depthFirstOver(starts, targets, g, groups, shared, memory)
  } finally {
    close()
  }
}

function depthFirstOver(starts: Uint32Blocks, targets: Uint32Blocks, g: DominatorInput, groups: number, shared: boolean, memory?: Uint32Array): Numbering {
  const n0 = g.objectCount
  // The DFS asks "may I go there" of a bitmap (one bit an object: it stays in the cache where an
  // array would cost a memory read an edge, the DFS's reads landing at random over the heap); a
  // bit is set for a non-live object and for every object the DFS has entered.
  const entered = new Int32Array((n0 + 31) >>> 5)
  let liveCount = 0
  const liveValue = g.liveValue ?? 1
  for (let o = 0; o < n0; o++) {
    if (g.live[o] !== liveValue) entered[o >>> 5]! |= 1 << (o & 31)
    else liveCount++
  }
  // Preorder 0 is the virtual root; each root group is a vertex too, numbered when the DFS enters
  // it (so that the numbering stays a true DFS preorder), stored in vertex[] as objectCount + group.
  const size = liveCount + 1 + groups
  const inMemory = memory !== undefined && memory.length >= 2 * size
  // Shared where the pass runs on a worker: the main thread reads vertex[] to help with the predecessor copy.
  const vertex = inMemory ? memory.subarray(0, size).fill(0) : newUint32(size, shared)
  const parent = inMemory ? memory.subarray(size, 2 * size).fill(0) : newUint32(size, shared)
  // The DFS needs no stack: its stack is the tree path from the start, which it climbs back
  // through parent[]; semi[] (unused until the predecessor copy) holds each vertex's next edge.
  const semi = newUint32(size + 1, shared)

  // DFS from the virtual root: each group's root targets, the other roots' targets; what it
  // numbers is what the roots reach. Then the leaked graph (every live object left), whose DFS
  // cannot enter the reachable part: every object there is numbered (entered) already, so the bitmap
  // alone says where each DFS may go.
  let count = 1
  const dfsFrom = (start: number, from: number): void => {
    entered[start >>> 5]! |= 1 << (start & 31)
    const first = count
    vertex[count] = start
    parent[count] = from
    semi[count] = starts.at(start)
    let w = count++
    let end = starts.at(start + 1)
    for (;;) {
      const e = semi[w]!
      if (e >= end) {
        if (w === first) return
        w = parent[w]!
        end = starts.at(vertex[w]! + 1)
        continue
      }
      semi[w] = e + 1
      const t = targets.at(e)
      const bit = 1 << (t & 31)
      if ((entered[t >>> 5]! & bit) !== 0) continue
      entered[t >>> 5]! |= bit
      vertex[count] = t
      parent[count] = w
      semi[count] = starts.at(t)
      w = count++
      end = starts.at(t + 1)
    }
  }
  // Roots in group order (groups first, ungrouped last), by a counting sort over their groups.
  const rootCount = g.rootTo.length
  const slotOf = (r: number): number => {
    const k = rootGroupOf(g, groups, r)
    return k < 0 ? groups : k
  }
  const firstOfGroup = new Uint32Array(groups + 2)
  for (let r = 0; r < rootCount; r++) firstOfGroup[slotOf(r) + 1]!++
  for (let k = 0; k <= groups; k++) firstOfGroup[k + 1]! += firstOfGroup[k]!
  const byGroup = new Uint32Array(rootCount)
  const fill = firstOfGroup.slice(0, groups + 1)
  for (let r = 0; r < rootCount; r++) byGroup[fill[slotOf(r)]!++] = r
  for (let k = 0; k <= groups; k++) {
    let from = 0
    if (k < groups) {
      from = count
      vertex[count] = n0 + k
      parent[count] = 0
      count++
    }
    for (let i = firstOfGroup[k]!; i < firstOfGroup[k + 1]!; i++) {
      const o = g.rootTo[byGroup[i]!]!
      if ((entered[o >>> 5]! & (1 << (o & 31))) === 0) dfsFrom(o, from)
    }
  }
  const groupPre = new Uint32Array(groups)
  for (let p = 1; p < count; p++) if (vertex[p]! >= n0) groupPre[vertex[p]! - n0] = p
  // A range test on preorder numbers then tells an edge between the two parts apart, without a
  // random read of reachable[].
  const reachedEnd = count
  // Finishing order of a DFS over the leaked graph. Taken in decreasing finishing order, the
  // first unvisited vertex of each round lies in a source component of the condensation. Its
  // stack goes in the tails of vertex[] and parent[] the leaked graph's numbering fills later:
  // one entry a leaked object, as many as the stack can ever hold. It marks where it has been in
  // a copy of the bitmap (the DFS below needs the bitmap as the DFS from the roots left it).
  const leakedCount = size - reachedEnd
  const finish = leakedFinishOrder(n0, starts, targets, entered.slice(), leakedCount, vertex.subarray(reachedEnd), parent.subarray(reachedEnd))
  const leakStarts: number[] = []
  for (let i = finish.length - 1; i >= 0; i--) {
    const o = finish[i]!
    if ((entered[o >>> 5]! & (1 << (o & 31))) === 0) {
      leakStarts.push(o)
      dfsFrom(o, 0)
    }
  }
  return {pre: null, vertex, parent, borrowed: inMemory, semi, count, reachedEnd, groupPre, rootTargets: NO_WORDS, rootTargetObjects: NO_WORDS, leakStarts: Uint32Array.from(leakStarts).sort()}
}

/**
 * pre[o], the preorder number of every object in the tree (≥ 1; every live object is: the
 * reachable ones from the roots, the leaked ones from their starts), OUTSIDE for the other slots;
 * and the root targets by preorder. Made once the DFS is done, so that pre[] (4 bytes an object
 * slot) is never allocated beside the DFS's out-edges where the pass holds them alone; and
 * written after the DFS rather than in it, where its random stores would compete with the DFS's
 * own reads, one after the other, for the memory.
 */
function numberObjectsAll(numbering: Numbering, g: DominatorInput, n0: number, shared: boolean, vertexParked: FileArray | null): void {
  const {vertex, count} = numbering
  const pre = newUint32(n0, shared).fill(OUTSIDE)
  numbering.pre = pre
  if (vertexParked) {
    numberFromFile(numbering, g, vertexParked)
    return
  }
  for (let w = 1; w < count; w++) {
    const o = vertex[w]!
    if (o < n0) pre[o] = w
  }
  // Root targets by preorder, so the semidominator loop searches the root list only for them
  // (a list, not a flag a vertex: roots are few beside the objects).
  numbering.rootTargets = Uint32Array.from(g.rootTo, o => pre[o]!).sort()
  numbering.rootTargetObjects = numbering.rootTargets.map(w => vertex[w]!)
}

/** numberObjectsAll where vertex[] waits in a scratch file (a memory limit): read back in order, the root targets' objects in ascending preorder. */
function numberFromFile(numbering: Numbering, g: DominatorInput, vertexParked: FileArray): void {
  const {count} = numbering
  const pre = numbering.pre!
  const n0 = pre.length
  const vertex = new Uint32Reader(vertexParked)
  try {
    for (let w = 1; w < count; w++) {
      if (w >= vertex.end) vertex.load(w, count)
      const o = vertex.words[w - vertex.start]!
      if (o < n0) pre[o] = w
    }
    const rootTargets = Uint32Array.from(g.rootTo, o => pre[o]!).sort()
    // 0 for a number past the tree's, as vertex[] has none there.
    const objects = new Uint32Array(rootTargets.length)
    for (let i = 0; i < rootTargets.length; i++) {
      const w = rootTargets[i]!
      if (w >= count) continue
      if (w < vertex.start || w >= vertex.end) vertex.load(w, count)
      objects[i] = vertex.words[w - vertex.start]!
    }
    numbering.rootTargets = rootTargets
    numbering.rootTargetObjects = objects
  } finally {
    vertex.close()
  }
}

/**
 * Leaked objects in DFS finishing order over the leaked graph. `marks` (a bit an object) comes in
 * clear for leaked objects and set elsewhere (the DFS goes only where it is clear), and goes out
 * all set. The stack: objects in stackObject[], their next edges in stackEdge[], `leaked` entries
 * each at least.
 */
function leakedFinishOrder(n0: number, starts: Uint32Blocks, targets: Uint32Blocks, marks: Int32Array, leaked: number, stackObject: Uint32Array, stackEdge: Uint32Array): Uint32Array {
  const finish = new Uint32Array(leaked)
  let done = 0
  for (let o = 0; o < n0; o++) {
    if ((marks[o >>> 5]! & (1 << (o & 31))) !== 0) continue
    marks[o >>> 5]! |= 1 << (o & 31)
    let sp = 1
    stackObject[0] = o
    stackEdge[0] = starts.at(o)
    while (sp > 0) {
      const v = stackObject[sp - 1]!
      const e = stackEdge[sp - 1]!
      if (e >= starts.at(v + 1)) {
        finish[done++] = v
        sp--
        continue
      }
      stackEdge[sp - 1] = e + 1
      const t = targets.at(e)
      const bit = 1 << (t & 31)
      if ((marks[t >>> 5]! & bit) !== 0) continue
      marks[t >>> 5]! |= bit
      stackObject[sp] = t
      stackEdge[sp] = starts.at(t)
      sp++
    }
  }
  return finish.subarray(0, done)
}

/**
 * The semi loop reads every vertex's predecessors by preorder number, in decreasing preorder:
 * read through inStart/inFrom/pre[] that is two random reads an edge, in a dependent chain.
 * So first a copy of the predecessor lists, renumbered and laid out in preorder, which the loop
 * then reads backwards in sequence. The DFS tree edge is left out of each list (the loop starts
 * from the DFS parent, always a predecessor numbered lower), which makes the copy about half the
 * edges, and a vertex whose one in-edge is its tree edge (most objects) costs no read of pre[]
 * at all. An edge the loop must ignore (from a free slot, or from the leaked graph into the
 * reachable one) is written as `count`. semi[] gets each vertex's first position in the copy,
 * until the loop writes the vertex's semidominator there.
 *
 * The lists' lengths are known from inStart and the DFS tree before anything is copied, so each
 * list's place is too: the lengths are found object by object (inStart read once, in order, from
 * the file where it is not in memory), then summed in preorder; the copy then reads inStart and
 * inFrom once more, in order, object by object, and writes each object's list at its place. It goes in pieces of
 * 2^16 consecutive objects (COPY_PIECE_SHIFT), which the threads at hand take in turn (an atomic
 * counter); no two write the same list, and the lists come out the same whoever copied them. On a
 * worker thread the main thread, done with its own phases by then, takes pieces too: the copy is
 * the pass's longest step but one.
 */
export interface PredecessorCopy {
  inStart: Uint32Array | FileArray
  inFrom: Uint32Array | FileArray
  pre: Uint32Array
  parent: Uint32Array
  /** Per preorder number: where its list starts in `lists` (count + 1 entries: the last is the end). */
  semi: Uint32Array
  /** In memory, or in a scratch file under a memory limit (copyPredecessorsToFile). */
  lists: Uint32Array | FileArray
  count: number
  reachedEnd: number
  /** [0]: the next piece to take; [1]: pieces done. */
  control: Int32Array
  pieces: number
  /** Objects per piece: 2^pieceShift. */
  pieceShift: number
}

const COPY_PIECE_SHIFT = 16

function predecessorCopy({inStart, inFrom}: ReverseEdges, numbering: Numbering, shared: boolean, pieceShift = COPY_PIECE_SHIFT, placeLists = (words: number): Uint32Array | FileArray => newUint32(words, shared)): PredecessorCopy {
  const {vertex, parent, semi, count, reachedEnd} = numbering
  const pre = numbering.pre!
  const n0 = pre.length
  // Where vertex[] waits in a scratch file (a memory limit), the root groups' numbers, a bit each.
  const groupVertex = vertex.length > 0 ? null : groupBits(numbering.groupPre, count)
  // Each list's length: the vertex's in-edges but its tree edge (none for the virtual root or a
  // root group, which the copy never reads); every live object is numbered.
  semi.fill(0, 0, count + 1)
  const starts = new Uint32Reader(inStart)
  try {
    starts.load(0, n0 + 1)
    let start = starts.words[0]!
    for (let o = 0; o < n0; o++) {
      if (o + 1 >= starts.end) starts.load(o + 1, n0 + 1)
      const next = starts.words[o + 1 - starts.start]!
      const w = pre[o]!
      if (w !== OUTSIDE) {
        const q = parent[w]!
        const parentIsObject = q !== 0 && (groupVertex ? (groupVertex[q >>> 5]! & (1 << (q & 31))) === 0 : vertex[q]! < n0)
        semi[w] = parentIsObject ? next - start - 1 : next - start
      }
      start = next
    }
  } finally {
    starts.close()
  }
  // Then each list's place, in preorder.
  let at = 0
  for (let w = 0; w < count; w++) {
    const length = semi[w]!
    semi[w] = at
    at += length
  }
  semi[count] = at
  return {
    pieceShift,
    pieces: Math.ceil(n0 / 2 ** pieceShift),
    inStart,
    inFrom,
    pre,
    parent,
    semi,
    lists: placeLists(at),
    count,
    reachedEnd,
    control: new Int32Array(shared ? new SharedArrayBuffer(8) : new ArrayBuffer(8)),
  }
}

/** vertex[] written to `scratch` and let go, where it has memory of its own (not the caller's, shared with parent[]): where it lies. */
function parkedVertex(numbering: Numbering, scratch: () => ScratchFile): FileArray | null {
  if (numbering.vertex.buffer === numbering.parent.buffer) return null
  const file = scratch().write(numbering.vertex)
  numbering.vertex = NO_WORDS
  return file
}

/** parent[] written to `scratch` and let go (the copy's hold too): where it lies; null without a scratch file. */
function parkedParent(numbering: Numbering, copy: PredecessorCopy, scratch: ScratchFile | null): FileArray | null {
  if (!scratch) return null
  const file = scratch.write(numbering.parent)
  numbering.parent = copy.parent = NO_WORDS
  return file
}

/** A bitmap over preorder numbers [0, count): the root groups' set. */
function groupBits(groupPre: Uint32Array, count: number): Int32Array {
  const bits = new Int32Array(Math.ceil(count / 32))
  for (const w of groupPre) bits[w >>> 5]! |= 1 << (w & 31)
  return bits
}

/** Copies the predecessor lists of the pieces this thread can take (at most `most`), into lists in memory. */
export function copyPredecessors(copy: PredecessorCopy, most = Infinity): void {
  const {control, pieces, lists} = copy
  if (!(lists instanceof Uint32Array)) throw new Error('predecessor copy: the lists are in a file')
  const readers = copyReaders(copy)
  try {
    for (let taken = 0; taken < most; taken++) {
      const p = Atomics.add(control, 0, 1)
      if (p >= pieces) break
      copyPiece(copy, p, readers, lists, 0, copy.count)
      Atomics.add(control, 1, 1)
      Atomics.notify(control, 1)
    }
  } finally {
    readers.close()
  }
}

/** Elements the copy to a scratch file holds at once, at least: 16 MiB (a pass over the reverse graph for each). */
const SCRATCH_WORDS = 2 ** 22

/**
 * The copy where the lists are in a scratch file (a memory limit): in ranges of consecutive
 * preorder numbers whose lists fill a buffer of `bufferWords` at most (or one list longer than
 * that), each range in one pass over the reverse graph, in order, then written to its place in
 * the file. On this thread alone.
 */
function copyPredecessorsToFile(copy: PredecessorCopy, scratch: ScratchFile, bufferWords = SCRATCH_WORDS): void {
  const {semi, count, pieces} = copy
  const lists = copy.lists as FileArray
  let longest = 0
  for (let w = 0; w < count; w++) longest = Math.max(longest, semi[w + 1]! - semi[w]!)
  const buffer = new Uint32Array(Math.max(1, Math.min(lists.length, Math.max(bufferWords, longest))))
  const readers = copyReaders(copy)
  try {
    for (let from = 0; from < count; ) {
      let to = from + 1
      while (to < count && semi[to + 1]! - semi[from]! <= buffer.length) to++
      if (semi[to]! > semi[from]!) {
        for (let p = 0; p < pieces; p++) copyPiece(copy, p, readers, buffer, from, to)
        scratch.writeAt(lists, semi[from]!, buffer.subarray(0, semi[to]! - semi[from]!))
      }
      from = to
    }
  } finally {
    readers.close()
  }
  Atomics.store(copy.control, 1, pieces)
}

/** The reverse graph's readers for the copy: its sources, and a piece's list starts at once (its objects' and the next one's). */
function copyReaders(copy: PredecessorCopy) {
  const sources = new Uint32Reader(copy.inFrom)
  const starts = new Uint32Reader(copy.inStart, 2 ** copy.pieceShift + 1)
  return {sources, starts, close: () => (sources.close(), starts.close())}
}

/**
 * The lists of piece p's objects numbered in [from, to), into `into`, which holds the lists from
 * vertex `from`'s on.
 */
function copyPiece(copy: PredecessorCopy, p: number, {sources, starts}: ReturnType<typeof copyReaders>, into: Uint32Array, from: number, to: number): void {
  const {pre, parent, semi, count, reachedEnd} = copy
  const n0 = pre.length
  const base = semi[from]!
  const first = p * 2 ** copy.pieceShift
  const end = Math.min(n0, first + 2 ** copy.pieceShift)
  starts.load(first, end + 1)
  const inStart = starts.words.subarray(first - starts.start, end + 1 - starts.start)
  const edgesEnd = inStart[end - first]!
  for (let o = first; o < end; o++) {
    const w = pre[o]!
    if (w === OUTSIDE || w < from || w >= to) continue
    let at = semi[w]! - base
    if (at === semi[w + 1]! - base) continue // no list (its one in-edge is its tree edge)
    // The tree edge comes from the object numbered parent[w]; where the parent is the virtual
    // root or a root group no object has its number, and nothing is left out.
    const q = parent[w]!
    let treeEdgeLeft = true
    const ceiling = w < reachedEnd ? reachedEnd : count
    for (let i = inStart[o - first]!, stop = inStart[o + 1 - first]!; i < stop; i++) {
      if (i >= sources.end || i < sources.start) sources.load(i, edgesEnd)
      const pv = pre[sources.words[i - sources.start]!]!
      if (treeEdgeLeft && pv === q) treeEdgeLeft = false
      else into[at++] = pv < ceiling ? pv : count
    }
  }
}

/** Waits until every piece is copied (the pieces others took included). */
function awaitCopied(copy: PredecessorCopy): void {
  awaitSignal(copy.control, 1, copy.pieces)
}

/**
 * Semidominators, in decreasing preorder, with Lengauer–Tarjan's link-eval forest, into semi[].
 * Semi-NCA needs eval only for the smallest semidominator on a path, so the forest keeps that
 * value itself instead of the vertex holding it (no label indirection), interleaved with the
 * ancestor link: forest[2v] = ancestor (NONE for a tree's root), forest[2v+1] = that minimum.
 * One cache line then serves both reads of a step of the path.
 */
function semidominators(numbering: Numbering, copy: PredecessorCopy, g: DominatorInput, groups: number, forestMemory: Uint32Array, parentWords: Uint32Array | FileArray): void {
  const {semi, count, rootTargets, rootTargetObjects, groupPre} = numbering
  const forest = forestMemory.fill(NONE)
  /**
   * Smallest semidominator on v's forest path (v itself while it is unlinked: its semi is still
   * v), compressing the path on the way. The climb reverses the ancestor links it passes and the
   * way back down restores them as links to the tree's root, so compression needs no stack.
   */
  const evaluate = (v: number): number => {
    if (forest[2 * v] === NONE) return v
    let below = NONE
    let x = v
    while (forest[2 * forest[2 * x]!] !== NONE) {
      const up = forest[2 * x]!
      forest[2 * x] = below
      below = x
      x = up
    }
    // x's ancestor is its tree's root, which compression leaves out; x keeps its link and value.
    const root = forest[2 * x]!
    let above = x
    while (below !== NONE) {
      const y = below
      below = forest[2 * y]!
      if (forest[2 * above + 1]! < forest[2 * y + 1]!) forest[2 * y + 1] = forest[2 * above + 1]!
      forest[2 * y] = root
      above = y
    }
    return forest[2 * v + 1]!
  }
  const rootTo = g.rootTo
  // In memory, or in the scratch file (read backwards, a block at a time).
  const predPre = new Uint32Blocks(copy.lists, LIST_CACHE_BYTES)
  // In memory, or in the scratch file (read backwards, a block at a time).
  const parent = new Uint32Blocks(parentWords, LIST_CACHE_BYTES)
  try {
    let predEnd = semi[count]!
    let target = rootTargets.length - 1 // the last root target at or below w
    for (let w = count - 1; w >= 1; w--) {
      // The DFS parent: the virtual root for a root group or a leak start, a group or the virtual
      // root for the root targets it entered first, else the object whose edge the DFS followed.
      const p = parent.at(w)
      let s = p
      while (target >= 0 && rootTargets[target]! > w) target--
      if (target >= 0 && rootTargets[target] === w) {
        // Edges from the virtual root or a group to every root target.
        const o = rootTargetObjects[target]!
        for (let r = firstAtOrAbove(rootTo, o); r < rootTo.length && rootTo[r] === o; r++) {
          // The virtual root's edge gives 0; a group is a predecessor like any other (numbered
          // after w when an earlier group's DFS reached w first).
          const k = rootGroupOf(g, groups, r)
          const c = k < 0 ? 0 : evaluate(groupPre[k]!)
          if (c < s) s = c
        }
      }
      const predStart = semi[w]!
      for (let i = predStart; i < predEnd && s > 0; i++) {
        const pv = predPre.at(i)
        if (pv === count) continue
        // A predecessor numbered before w is not in the forest yet: its semi is itself.
        const c = pv < w ? pv : evaluate(pv)
        if (c < s) s = c
      }
      predEnd = predStart
      semi[w] = s
      forest[2 * w] = p
      forest[2 * w + 1] = s
    }
  } finally {
    predPre.close()
    parent.close()
  }
}

/** What the semidominator loop's block cache holds where the lists are in a scratch file. */
const LIST_CACHE_BYTES = 4 * 2 ** 20

/**
 * Retained bytes and objects of every object: its own plus those of everything it dominates.
 * `bytes` comes in holding each live object's shallow size and is summed in place, children
 * before parents (reverse preorder). Each root group gets what it alone holds. `objects` (zeroed,
 * one entry an object) receives the counts: shared by default, as the index may be written from it
 * on another thread.
 */
export function retainedSizes(tree: DominatorTree, bytes: RetainedBytes, objects = sharedUint32(bytes.length)): {objects: Uint32Array; groupBytes: Float64Array; groupObjects: Float64Array} {
  const n = bytes.length
  const groupBytes = new Float64Array(tree.groupCount)
  const groupObjects = new Float64Array(tree.groupCount)
  const order = tree.preorder
  for (let i = order.length - 1; i >= 0; i--) {
    const o = order[i]!
    const d = tree.idom[o]!
    // Its dominated objects have added theirs already (they come after it in preorder); now itself.
    const count = objects[o]! + 1
    objects[o] = count
    if (d < n) {
      bytes[d] = bytes[d]! + bytes[o]!
      objects[d] = objects[d]! + count
    } else {
      const group = groupOfIdom(d, n, tree.groupCount)
      if (group >= 0) {
        groupBytes[group] = groupBytes[group]! + bytes[o]!
        groupObjects[group] = groupObjects[group]! + count
      }
    }
  }
  return {objects, groupBytes, groupObjects}
}
