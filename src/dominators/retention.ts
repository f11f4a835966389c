import type {HeapGraph} from '../graph/csr.js'
import {startDominatorTree, type DominatorJob} from './dominator-job.js'
import {NOT_IN_TREE, groupOfIdom, retainedSizes, type DominatorInput} from './dominators.js'
import {subtreeSumsByChildren, treeObjectsCounted} from './retained-by-children.js'
import type {DominatorChildren} from './dominator-children.js'
import {inFrameOfItsOwn} from '../store/frame.js'
import {largestPositions} from '../util/largest-positions.js'
import {sharedUint32} from '../util/shared-arrays.js'
import {ACCUMULATION_MIN_SHARE, accumulationPoints, type Accumulation, type RetainedBytes} from './accumulation.js'
import {balancedSplit, mergedWalks, walkDominatorTree, type TreeWalkInput, type TreeWalkSums} from './dominator-walk.js'

export type {RetainedBytes}
import type {TypeIds} from '../graph/object-types.js'

/**
 * Why memory is held: for every live object its shortest-path parent from the roots, its
 * immediate dominator, what it retains, and the dominator tree's child lists; per type, the bytes
 * its objects retain counted once. All typed arrays, computed once at analysis and stored in the
 * index, so `path`, `top`, `dominators` and `suspects` read only what they print.
 */
export interface Retention {
  /**
   * What each object retains: its bytes (the object counts are handed off only: see `finish`); in
   * 4 bytes where the sums go over the child lists and every sum fits (RetentionSizes).
   */
  retainedBytes: RetainedBytes
  /** Children of object o in the dominator tree: child[childStart[o] .. childStart[o+1]), the largest (retained bytes) first, the others ascending; the virtual root's at o = objectCount. */
  childStart: Uint32Array
  child: Uint32Array
  leakStarts: Uint32Array
  /** Per type id (index 0: untyped, left 0): bytes and objects retained by the type's objects, each byte once. */
  typeRetainedBytes: Float64Array
  typeRetainedObjects: Float64Array
  /** Objects dominated by the virtual root alone, largest retained first (at most TOP_OBJECTS). */
  top: Uint32Array
  /** Per thread (as `threads` lists them): bytes and objects reachable only from its registers, stack and TLS. */
  threadRetainedBytes: Float64Array
  threadRetainedObjects: Float64Array
  /** Accumulation points of the biggest holders and what lies under them (accumulation.ts). */
  accumulations: Accumulation[]
  /** Whether the dominator pass's parent[] waited in its scratch file (dominators.ts: a memory limit). */
  parentParked: boolean
}

export const TOP_OBJECTS = 1000

export interface RetentionInput {
  graph: Pick<HeapGraph, 'objectCount' | 'rootTo' | 'rootThread'>
  /**
   * The out-edges, in a holder the dominator pass empties after its DFS: where the caller holds
   * them through the holder alone, their memory goes then.
   */
  forward: DominatorInput['forward']
  /**
   * The reverse graph, in a holder the dominator pass empties as soon as it has its own copy of
   * the predecessor lists (dominators.ts): the caller holds it through the holder alone.
   */
  reverse: DominatorInput['reverse']
  /** Set once the caller reads the reverse graph no more (dominators.ts). */
  reverseReleased?: Int32Array
  /** Memory the dominator pass may write over (dominators.ts). */
  memory?: Uint32Array
  /** The array store's collection, where the dominator pass lets arrays go (dominators.ts). */
  collect?: () => void
  /** Per object slot, `liveValue` (default 1) for live objects. */
  live: Uint8Array
  liveValue?: number
  /** The threads of the core by tid: each one's roots form a group, so what only it holds is known. */
  threads: number[]
  /**
   * Bytes the process may still allocate (analyze --memory-limit): where the pass ran on this
   * thread and the retained sizes would not fit beside idom and the preorder, those two go first
   * and the sums are taken over the child lists (retained-by-children.ts). Absent: no limit.
   */
  room?: () => number
  /** Where the dominator pass may keep a scratch file under the limit (dominators.ts: scratchBeside). */
  scratchBeside?: string
}

export interface RetentionSizes {
  /**
   * Each live object's own bytes (consumed: becomes retainedBytes). A Uint32Array only where
   * asked (`finish`: narrow) and the live objects' bytes total less than 2^32, so that every
   * subtree's sum fits too.
   */
  shallowBytes: RetainedBytes
  /** Type id per object (0 untyped) and the number of ids. */
  typeOf: TypeIds
  typeCount: number
  /** Where given, the type ids are read through it (the tree walk: dominator-walk.ts), not `typeOf`. */
  typeAt?: (object: number) => number
}

/** Paths from roots are known; the dominator tree is being computed (perhaps on a worker thread). */
export interface PendingRetention {
  /** The dominator pass runs on a worker thread. */
  parallel: boolean
  /** Takes a share of the dominator pass's work now, if it runs on a worker (DominatorJob.help). */
  help(): void
  /** Lets the pass's worker go (finish does, once done with it): it waits for a share of the last step until then. */
  release(): void
  /**
   * Joins the dominator pass, then sums retained sizes. `sizes` is called while a worker thread
   * still runs the pass (this thread would only wait), once the pass is past its peak memory;
   * else once the pass is done, so that the shallow sizes (8 bytes per object slot) are not
   * allocated beside its arrays on the same thread. `handOff`
   * gets each per-object array once it is final (the caller may write it while the rest is
   * computed), not always in the index's order: under a memory limit the retained object counts
   * come first, and are let go once handed off (an array not shared is written at once), and
   * `sizes` is asked for narrow shallow bytes (4 bytes an object slot where they fit, not 8).
   */
  finish(sizes: (narrow: boolean) => RetentionSizes, progress?: Progress, handOff?: (arrays: Partial<RetentionArrays>) => void): Retention
}

/**
 * The per-object arrays of the analysis: with a Retention's, each object's immediate dominator
 * (dominators.ts: BY_VIRTUAL_ROOT, NOT_IN_TREE) and retained objects, which are handed off only.
 */
export type RetentionArrays = Pick<Retention, 'retainedBytes' | 'childStart' | 'child'> & {idom: Uint32Array; retainedObjects: Uint32Array}

type Progress = (phase: string, done: number, total: number) => void

/**
 * Starts the retention analysis: the dominator tree on a worker thread when `workers` allows,
 * so the caller's next phases (shortest paths, types, summary) run beside it; `finish` joins it
 * and sums retained sizes.
 */
export function startRetention(input: RetentionInput, workers: number, progress?: Progress): PendingRetention {
  const g = input.graph
  const n = g.objectCount
  const groupOfTid = new Map(input.threads.map((tid, i) => [tid, i]))
  const rootGroup = Int32Array.from(g.rootThread, tid => groupOfTid.get(tid) ?? -1)
  const dominatorInput = {
    objectCount: n,
    forward: input.forward,
    reverse: input.reverse,
    reverseReleased: input.reverseReleased,
    memory: input.memory,
    collect: input.collect,
    room: input.room,
    scratchBeside: input.scratchBeside,
    rootTo: g.rootTo,
    live: input.live,
    liveValue: input.liveValue,
    rootGroup,
    groupCount: input.threads.length,
  }
  // Apart: finish must not reach the input (its holders, the memory the pass may write over).
  const room = input.room
  const collect = input.collect
  if (workers < 2) progress?.('dominators', 0, 1)
  // Sums over the child lists (lean) where the limit does not hold the usual sums beside idom and
  // the preorder: known once the pass is done on this thread, so the preorder goes at once.
  const fitsSums = (bytesToCome = 0): boolean => room === undefined || room() - bytesToCome >= RETAINED_BYTES_PER_SLOT * n
  const job = startDominatorTree(dominatorInput, workers, fitsSums)
  return {
    parallel: job.parallel,
    help(): void {
      if (job.parallel) progress?.('dominators (copy)', 0, 1)
      job.help()
    },
    release: () => job.release(),
    finish(shallowSizes: (narrow: boolean) => RetentionSizes, finishProgress = progress, handOff = (_arrays: Partial<RetentionArrays>): void => {}): Retention {
      if (job.parallel) finishProgress?.('dominators (rest)', 0, 1)
      // While a worker runs the pass, this thread would only wait: it computes the shallow sizes
      // then, and writes the memory of the retained object counts once (its page faults, some
      // 0.25 s on a VM at 24 M object slots), so that only the sums are left after the join; but
      // only once the pass is past its peak memory, not to add to it.
      job.awaitPastPeak()
      let sizes = job.parallel ? shallowSizes(false) : null
      const objectCounts = job.parallel ? sharedUint32(n).fill(0) : undefined
      const lean = !job.parallel && (!job.preorderKept || !fitsSums())
      // In a frame of its own: under the limit nothing else holds idom and the preorder once it returns.
      const joined = inFrameOfItsOwn(() => joinedTree(job, n, lean, handOff))
      // Their memory, before the sums allocate (nothing else would collect this thread's heap in time).
      if (lean) collect?.()
      finishProgress?.('retained sizes', 0, 1)
      let retainedBytes: RetainedBytes
      let threadRetainedBytes: Float64Array
      let threadRetainedObjects: Float64Array
      let children: DominatorChildren
      // Each of the virtual root's children's retained objects, in its list's order (ascending ids
      // until largestChildFirst moves one), for the tree walk's split.
      let rootObjects: Uint32Array
      if (joined.tree) {
        sizes ??= shallowSizes(false)
        retainedBytes = sizes.shallowBytes
        // The worker (if any) sorts out the child lists meanwhile.
        let retainedObjects: Uint32Array
        ;({objects: retainedObjects, groupBytes: threadRetainedBytes, groupObjects: threadRetainedObjects} = retainedSizes(joined.tree, retainedBytes, objectCounts))
        handOff({retainedBytes, retainedObjects})
        children = job.children()
        rootObjects = Uint32Array.from(rootChildren(children), o => retainedObjects[o]!)
      } else {
        // Back in memory once idom is gone (the tree's arrays waited in a scratch file: dominator-job.ts).
        children = job.children()
        const {childStart, child} = children
        // The counts first, handed off (written at once) and let go before the bytes allocate.
        ;({rootObjects, groupSums: threadRetainedObjects} = inFrameOfItsOwn(() => {
          const counts = treeObjectsCounted(n, child)
          const groupSums = subtreeSumsByChildren(childStart, child, joined.rootChildGroup!, joined.groupCount, counts)
          handOff({retainedObjects: counts})
          return {rootObjects: Uint32Array.from(rootChildren(children), o => counts[o]!), groupSums}
        }))
        collect?.()
        sizes = shallowSizes(true)
        retainedBytes = sizes.shallowBytes
        threadRetainedBytes = subtreeSumsByChildren(childStart, child, joined.rootChildGroup!, joined.groupCount, retainedBytes)
        handOff({retainedBytes})
      }
      const {childStart, child} = children
      const moved = largestChildFirst(childStart, child, retainedBytes)
      movedToFront(rootObjects, moved)
      handOff({childStart, child})
      const top = largestFirst(rootChildren(children), retainedBytes, TOP_OBJECTS)
      let liveBytes = 0
      for (const o of rootChildren(children)) liveBytes += retainedBytes[o]!
      const points = accumulationPoints(childStart, child, retainedBytes, top, ACCUMULATION_MIN_SHARE * liveBytes)
      const walk = walkOnBoth(job, {childStart, child, typeOf: sizes.typeOf, typeCount: sizes.typeCount, ...(sizes.typeAt ? {typeAt: sizes.typeAt} : {}), retainedBytes, points: points.map(p => p.point), from: 0, to: rootObjects.length}, rootObjects)
      const accumulations = points.map((p, k) => ({...p, ...walk.under[k]!}))
      return {retainedBytes, childStart, child, leakStarts: joined.leakStarts, typeRetainedBytes: walk.bytes, typeRetainedObjects: walk.objects, top, threadRetainedBytes, threadRetainedObjects, accumulations, parentParked: joined.parentParked}
    },
  }
}

/** What it takes to sum retained sizes the usual way beside idom and the preorder: 8 bytes an object slot, and 4 for the counts. */
const RETAINED_BYTES_PER_SLOT = 12

/**
 * The dominator tree, joined, its idom handed off. `lean`: only what the sums over the child lists
 * need is kept (each root child's group read from idom), and the tree itself is let go, so that
 * idom and the preorder are garbage once this returns, before the child lists are taken.
 */
function joinedTree(job: DominatorJob, n: number, lean: boolean, handOff: (arrays: Partial<RetentionArrays>) => void) {
  const tree = job.join()
  handOff({idom: tree.idom})
  const {leakStarts, groupCount, parentParked} = tree
  if (!lean) return {tree, leakStarts, groupCount, parentParked, rootChildGroup: null}
  return {tree: null, leakStarts, groupCount, parentParked, rootChildGroup: rootChildGroups(tree.idom, n, groupCount)}
}

/**
 * Per child of the virtual root, in its list's order, the root group that dominates it, or −1:
 * read from idom alone. The virtual root's children are the objects whose idom is no object (nor
 * NOT_IN_TREE), ascending, as dominatorChildren lists them.
 */
function rootChildGroups(idom: Uint32Array, n: number, groupCount: number): Int32Array {
  let count = 0
  for (let o = 0; o < n; o++) if (idom[o]! >= n && idom[o] !== NOT_IN_TREE) count++
  const groups = new Int32Array(count)
  for (let o = 0, k = 0; o < n; o++) if (idom[o]! >= n && idom[o] !== NOT_IN_TREE) groups[k++] = groupOfIdom(idom[o]!, n, groupCount)
  return groups
}

/** The virtual root's children: the objects nothing else dominates. */
function rootChildren({childStart, child}: DominatorChildren): Uint32Array {
  const n = childStart.length - 2
  return child.subarray(childStart[n]!, childStart[n + 1]!)
}

/**
 * Moves each node's largest child (by retained bytes; the first of equals) to the front of its
 * child list, the rest staying ascending: the accumulation walk of `suspects` then reads one
 * child a step instead of a big array's millions. Returns where the virtual root's list had the
 * child it moved (0: none moved).
 */
function largestChildFirst(childStart: Uint32Array, child: Uint32Array, retainedBytes: RetainedBytes): number {
  let rootMoved = 0
  for (let v = 0; v + 1 < childStart.length; v++) {
    const a = childStart[v]!
    const b = childStart[v + 1]!
    if (b - a < 2) continue
    let best = a
    for (let i = a + 1; i < b; i++) if (retainedBytes[child[i]!]! > retainedBytes[child[best]!]!) best = i
    if (best === a) continue
    movedToFront(child.subarray(a, b), best - a)
    if (v + 2 === childStart.length) rootMoved = best - a
  }
  return rootMoved
}

/** Moves element `at` of `list` to its front, the ones before it up by one, so that the rest keeps its order. */
function movedToFront(list: Uint32Array, at: number): void {
  if (at === 0) return
  const moved = list[at]!
  list.copyWithin(1, 0, at)
  list[0] = moved
}

/**
 * The tree walk's sums (dominator-walk.ts), on two threads where the dominator pass's worker is
 * there, idle by now: the virtual root's children are cut where each part holds about half of the
 * objects, as far as they allow (where one child holds most of the heap, its part is walked by
 * this thread and the worker's is small); then the worker is let go.
 */
function walkOnBoth(job: DominatorJob, whole: TreeWalkInput, rootObjects: Uint32Array): TreeWalkSums {
  try {
    const split = balancedSplit(rootObjects)
    const theirs = job.shareWalk({...whole, from: split})
    const mine = walkDominatorTree(theirs ? {...whole, to: split} : whole)
    return theirs ? mergedWalks(mine, theirs()) : mine
  } finally {
    job.release()
  }
}

/** Up to k of `ids` (ascending), by `key` (indexed by id) descending, ties by id. */
function largestFirst(ids: Uint32Array, key: RetainedBytes, k: number): Uint32Array {
  return Uint32Array.from(largestPositions(ids, k, i => key[ids[i]!]!), i => ids[i]!)
}
