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

/** idom value of a vertex dominated only by the virtual root (a root target, a leak start). */
export const BY_VIRTUAL_ROOT = 0xffff_fffe
/** idom value of an object outside the tree (free slots). */
export const NOT_IN_TREE = 0xffff_ffff

export interface DominatorInput {
  objectCount: number
  outStart: Uint32Array
  outTo: Uint32Array
  /** Reverse CSR: sources of the incoming edges of o are inFrom[inStart[o] .. inStart[o+1]). */
  inStart: Uint32Array
  inFrom: Uint32Array
  /** Root targets, sorted ascending (as the graph stores them). */
  rootTo: Uint32Array
  /** 1 for live objects. */
  live: Uint8Array
  /** 1 for objects a root reaches. */
  reachable: Uint8Array
}

export interface DominatorTree {
  /** Per object: its immediate dominator's index, BY_VIRTUAL_ROOT, or NOT_IN_TREE. */
  idom: Uint32Array
  /** Leaked objects that start the leaked graph, ascending. */
  leakStarts: Uint32Array
  /** Objects in the tree, in DFS preorder: a dominator comes before everything it dominates. */
  preorder: Uint32Array
}

const NONE = 0xffff_ffff

export function dominatorTree(g: DominatorInput): DominatorTree {
  const n0 = g.objectCount
  if (n0 >= BY_VIRTUAL_ROOT) throw new RangeError(`${n0} objects: too many for 32-bit dominator ids`)
  let liveCount = 0
  for (let o = 0; o < n0; o++) liveCount += g.live[o]!
  const size = liveCount + 1 // preorder 0 is the virtual root
  // pre[o]: preorder number of object o (≥ 1), 0 while unvisited.
  const pre = new Uint32Array(n0)
  const vertex = new Uint32Array(size)
  const parent = new Uint32Array(size)
  const stackV = new Uint32Array(size)
  const stackE = new Uint32Array(size)
  const follows = (from: number, to: number): boolean => g.live[to] === 1 && g.reachable[to] === g.reachable[from]

  // Pass 1: finishing order of a DFS over the leaked graph. Taken in decreasing finishing order,
  // the first unvisited vertex of each round lies in a source component of the condensation.
  const finish = leakedFinishOrder(g, pre, stackV, stackE, follows)

  // Pass 2: DFS from the virtual root: root targets first, then leak candidates.
  let count = 1
  const dfsFrom = (start: number): void => {
    pre[start] = count
    vertex[count] = start
    parent[count] = 0
    count++
    let sp = 0
    stackV[sp] = start
    stackE[sp] = g.outStart[start]!
    sp++
    while (sp > 0) {
      const v = stackV[sp - 1]!
      const e = stackE[sp - 1]!
      if (e >= g.outStart[v + 1]!) {
        sp--
        continue
      }
      stackE[sp - 1] = e + 1
      const t = g.outTo[e]!
      if (pre[t] !== 0 || !follows(v, t)) continue
      pre[t] = count
      vertex[count] = t
      parent[count] = pre[v]!
      count++
      stackV[sp] = t
      stackE[sp] = g.outStart[t]!
      sp++
    }
  }
  for (let r = 0; r < g.rootTo.length; r++) {
    const o = g.rootTo[r]!
    if (pre[o] === 0 && g.live[o]) dfsFrom(o)
  }
  const starts: number[] = []
  for (let i = finish.length - 1; i >= 0; i--) {
    const o = finish[i]!
    if (pre[o] === 0) {
      starts.push(o)
      dfsFrom(o)
    }
  }

  // Semidominators, in decreasing preorder, with a link-eval forest (ancestor, label).
  const semi = new Uint32Array(count)
  const label = new Uint32Array(count)
  const ancestor = stackE // the DFS is done: reuse its cursor stack as the forest
  ancestor.fill(NONE, 0, count)
  for (let p = 0; p < count; p++) {
    semi[p] = p
    label[p] = p
  }
  const path = stackV
  const evaluate = (v: number): number => {
    if (ancestor[v] === NONE) return v
    let sp = 0
    let x = v
    while (ancestor[ancestor[x]!] !== NONE) {
      path[sp++] = x
      x = ancestor[x]!
    }
    while (sp > 0) {
      x = path[--sp]!
      const a = ancestor[x]!
      if (semi[label[a]!]! < semi[label[x]!]!) label[x] = label[a]!
      ancestor[x] = ancestor[a]!
    }
    return label[v]!
  }
  for (let w = count - 1; w >= 1; w--) {
    const o = vertex[w]!
    let s = semi[w]!
    // The virtual root's edge: to every root target, and to each leak start (parent 0).
    if (parent[w] === 0 || (g.reachable[o] && g.rootTo[firstAtOrAbove(g.rootTo, o)] === o)) s = 0
    for (let i = g.inStart[o]!, end = g.inStart[o + 1]!; i < end && s > 0; i++) {
      const v = g.inFrom[i]!
      const pv = pre[v]!
      if (pv === 0 || g.reachable[v] !== g.reachable[o]) continue
      const c = semi[evaluate(pv)]!
      if (c < s) s = c
    }
    semi[w] = s
    ancestor[w] = parent[w]!
  }

  // Immediate dominators: climb from the DFS parent until at or above the semidominator.
  const idomPre = label // label is no longer needed
  idomPre[0] = 0
  for (let w = 1; w < count; w++) {
    let d = parent[w]!
    while (d > semi[w]!) d = idomPre[d]!
    idomPre[w] = d
  }
  // pre is no longer needed either: it becomes the answer, saving an array of objectCount words.
  const idom = pre.fill(NOT_IN_TREE)
  for (let w = 1; w < count; w++) {
    const d = idomPre[w]!
    idom[vertex[w]!] = d === 0 ? BY_VIRTUAL_ROOT : vertex[d]!
  }
  return {idom, leakStarts: Uint32Array.from(starts).sort(), preorder: vertex.subarray(1, count)}
}

/** Leaked objects in DFS finishing order (edges restricted to leaked targets); leaves pre zeroed. */
function leakedFinishOrder(
  g: DominatorInput,
  mark: Uint32Array,
  stackV: Uint32Array,
  stackE: Uint32Array,
  follows: (from: number, to: number) => boolean,
): Uint32Array {
  let leaked = 0
  for (let o = 0; o < g.objectCount; o++) if (g.live[o] && !g.reachable[o]) leaked++
  const finish = new Uint32Array(leaked)
  let done = 0
  for (let o = 0; o < g.objectCount; o++) {
    if (!g.live[o] || g.reachable[o] || mark[o]) continue
    mark[o] = 1
    let sp = 0
    stackV[sp] = o
    stackE[sp] = g.outStart[o]!
    sp++
    while (sp > 0) {
      const v = stackV[sp - 1]!
      const e = stackE[sp - 1]!
      if (e >= g.outStart[v + 1]!) {
        finish[done++] = v
        sp--
        continue
      }
      stackE[sp - 1] = e + 1
      const t = g.outTo[e]!
      if (mark[t] || !follows(v, t)) continue
      mark[t] = 1
      stackV[sp] = t
      stackE[sp] = g.outStart[t]!
      sp++
    }
  }
  for (let i = 0; i < done; i++) mark[finish[i]!] = 0
  return finish
}

/**
 * Retained bytes and objects of every object: its own plus those of everything it dominates.
 * `bytes` comes in holding each live object's shallow size and is summed in place, children
 * before parents (reverse preorder).
 */
export function retainedSizes(tree: DominatorTree, bytes: Float64Array): Uint32Array {
  const objects = new Uint32Array(bytes.length)
  const order = tree.preorder
  for (let i = 0; i < order.length; i++) objects[order[i]!] = 1
  for (let i = order.length - 1; i >= 0; i--) {
    const o = order[i]!
    const d = tree.idom[o]!
    if (d === BY_VIRTUAL_ROOT) continue
    bytes[d] = bytes[d]! + bytes[o]!
    objects[d] = objects[d]! + objects[o]!
  }
  return objects
}
