import type {HeapGraph} from './csr.js'
import {startDominatorTree} from './dominator-job.js'
import {NOT_IN_TREE, retainedSizes} from './dominators.js'
import {reachableFromParents, shortestPathParents} from './reachability.js'

/**
 * Why memory is held: for every live object its shortest-path parent from the roots, its
 * immediate dominator, what it retains, and the dominator tree's child lists; per type, the bytes
 * its objects retain counted once. All typed arrays, computed once at analysis and stored in the
 * index, so `path`, `top`, `dominators` and `suspects` read only what they print.
 */
export interface Retention {
  /** Breadth-first parent from the roots (FROM_ROOT, UNREACHED: reachability.ts). */
  parent: Uint32Array
  reachable: Uint8Array
  /** Immediate dominator (dominators.ts: BY_VIRTUAL_ROOT, NOT_IN_TREE). */
  idom: Uint32Array
  retainedBytes: Float64Array
  retainedObjects: Uint32Array
  /** Children of object o in the dominator tree: child[childStart[o] .. childStart[o+1]), ascending; the virtual root's at o = objectCount. */
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
}

export const TOP_OBJECTS = 1000

export interface RetentionInput {
  graph: Pick<HeapGraph, 'objectCount' | 'outStart' | 'outTo' | 'inStart' | 'inFrom' | 'rootTo' | 'rootThread'>
  /** 1 for live objects. */
  live: Uint8Array
  /** The threads of the core by tid: each one's roots form a group, so what only it holds is known. */
  threads: number[]
}

export interface RetentionSizes {
  /** Each live object's own bytes (consumed: becomes retainedBytes). */
  shallowBytes: Float64Array
  /** Type id per object (0 untyped) and the number of ids. */
  typeOf: Uint32Array
  typeCount: number
}

/** Paths from roots are known; the dominator tree is being computed (perhaps on a worker thread). */
export interface PendingRetention {
  parent: Uint32Array
  reachable: Uint8Array
  /** The dominator pass runs on a worker thread. */
  parallel: boolean
  finish(sizes: RetentionSizes, progress?: Progress): Retention
}

type Progress = (phase: string, done: number, total: number) => void

/**
 * Starts the retention analysis: shortest-path parents and reachability at once (the next phases
 * need them), the dominator tree on a worker thread when `workers` allows, so the caller's next
 * phases (types, summary) run beside it; `finish` joins it and sums retained sizes.
 */
export function startRetention(input: RetentionInput, workers: number, progress?: Progress): PendingRetention {
  const g = input.graph
  const n = g.objectCount
  progress?.('paths from roots', 0, 1)
  const parent = shortestPathParents(n, g.outStart, g.outTo, g.rootTo)
  const reachable = reachableFromParents(parent)
  const groupOfTid = new Map(input.threads.map((tid, i) => [tid, i]))
  const rootGroup = Int32Array.from(g.rootThread, tid => groupOfTid.get(tid) ?? -1)
  const dominatorInput = {
    objectCount: n,
    outStart: g.outStart,
    outTo: g.outTo,
    inStart: g.inStart,
    inFrom: g.inFrom,
    rootTo: g.rootTo,
    live: input.live,
    reachable,
    rootGroup,
    groupCount: input.threads.length,
  }
  if (workers < 2) progress?.('dominators', 0, 1)
  const job = startDominatorTree(dominatorInput, workers)
  return {
    parent,
    reachable,
    parallel: job.parallel,
    finish(sizes: RetentionSizes, finishProgress = progress): Retention {
      if (job.parallel) finishProgress?.('dominators (rest)', 0, 1)
      const tree = job.join()
      finishProgress?.('retained sizes', 0, 1)
      const retainedBytes = sizes.shallowBytes
      const {objects: retainedObjects, groupBytes: threadRetainedBytes, groupObjects: threadRetainedObjects} = retainedSizes(tree, retainedBytes)
      const {childStart, child} = childLists(tree.idom, n)
      const {bytes: typeRetainedBytes, objects: typeRetainedObjects} = retainedPerType(childStart, child, n, sizes.typeOf, sizes.typeCount, retainedBytes, retainedObjects)
      const top = largestFirst(child.subarray(childStart[n]!, childStart[n + 1]!), retainedBytes, TOP_OBJECTS)
      return {parent, reachable, idom: tree.idom, retainedBytes, retainedObjects, childStart, child, leakStarts: tree.leakStarts, typeRetainedBytes, typeRetainedObjects, top, threadRetainedBytes, threadRetainedObjects}
    },
  }
}

/** The whole retention analysis on this thread. */
export function retentionOf(input: RetentionInput & RetentionSizes, progress?: Progress): Retention {
  return startRetention(input, 1, progress).finish(input)
}

/** The dominator tree's child lists by counting sort over idom (children ascending); the root groups' children count as the virtual root's. */
function childLists(idom: Uint32Array, n: number): {childStart: Uint32Array; child: Uint32Array} {
  const childStart = new Uint32Array(n + 2)
  let inTree = 0
  for (let o = 0; o < n; o++) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    childStart[(d >= n ? n : d) + 1]!++
    inTree++
  }
  for (let i = 0; i <= n; i++) childStart[i + 1]! += childStart[i]!
  const child = new Uint32Array(inTree)
  const fill = childStart.slice(0, n + 1)
  for (let o = 0; o < n; o++) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    child[fill[d >= n ? n : d]!++] = o
  }
  return {childStart, child}
}

/**
 * Retained bytes per type, each byte once: an object adds its retained size to its type unless
 * one of its dominators has the same type (it is then inside that one's retained size already).
 * A depth-first walk of the dominator tree keeps, per type, how many objects of it are open above.
 */
function retainedPerType(
  childStart: Uint32Array,
  child: Uint32Array,
  n: number,
  typeOf: Uint32Array,
  typeCount: number,
  retainedBytes: Float64Array,
  retainedObjects: Uint32Array,
): {bytes: Float64Array; objects: Float64Array} {
  const bytes = new Float64Array(typeCount)
  const objects = new Float64Array(typeCount)
  const open = new Uint32Array(typeCount)
  const stackNode = new Uint32Array(child.length + 1)
  const stackNext = new Uint32Array(child.length + 1)
  let sp = 0
  stackNode[0] = n
  stackNext[0] = childStart[n]!
  sp = 1
  while (sp > 0) {
    const v = stackNode[sp - 1]!
    const next = stackNext[sp - 1]!
    if (next < childStart[v + 1]!) {
      stackNext[sp - 1] = next + 1
      const c = child[next]!
      const t = typeOf[c]!
      if (t > 0) {
        if (open[t] === 0) {
          bytes[t] = bytes[t]! + retainedBytes[c]!
          objects[t] = objects[t]! + retainedObjects[c]!
        }
        open[t]!++
      }
      stackNode[sp] = c
      stackNext[sp] = childStart[c]!
      sp++
    } else {
      sp--
      if (v < n && typeOf[v]! > 0) open[typeOf[v]!]!--
    }
  }
  return {bytes, objects}
}

/**
 * Positions of the k largest values, largest first (ties by position), without sorting them all:
 * the k-th largest value by a native numeric sort of a copy, then only what is at or above it.
 */
export function largestPositions(values: Float64Array, k: number): number[] {
  let chosen: number[]
  if (values.length <= k) chosen = [...values.keys()]
  else {
    const threshold = Float64Array.from(values).sort()[values.length - k]!
    const above: number[] = []
    const at: number[] = []
    for (let i = 0; i < values.length; i++) {
      if (values[i]! > threshold) above.push(i)
      else if (values[i] === threshold && at.length < k) at.push(i)
    }
    chosen = [...above, ...at].slice(0, k)
  }
  return chosen.sort((a, b) => values[b]! - values[a]! || a - b)
}

/** Up to k of `ids` (ascending), by `key` (indexed by id) descending, ties by id. */
function largestFirst(ids: Uint32Array, key: Float64Array, k: number): Uint32Array {
  return Uint32Array.from(largestPositions(Float64Array.from(ids, o => key[o]!), k), i => ids[i]!)
}
