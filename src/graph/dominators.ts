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
/** idom value of an object that only root group g (one thread's registers, stack and TLS) reaches: BY_GROUP − g. */
export const BY_GROUP = 0xffff_fffd

/** The root group an idom value names, or −1 when it names an object or the virtual root. */
export function groupOfIdom(idom: number, objectCount: number, groupCount: number): number {
  return idom >= objectCount && idom <= BY_GROUP && BY_GROUP - idom < groupCount ? BY_GROUP - idom : -1
}

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
  /**
   * Per root (parallel to rootTo): its group, or −1. Each group is a pseudo-vertex between the
   * virtual root and the targets of its roots, so an object only one thread's roots reach is
   * dominated by that thread's group, and the group's retained size is what only that thread holds.
   */
  rootGroup?: Int32Array
  groupCount?: number
}

export interface DominatorTree {
  /** Per object: its immediate dominator's index, BY_VIRTUAL_ROOT, or NOT_IN_TREE. */
  idom: Uint32Array
  /** Leaked objects that start the leaked graph, ascending. */
  leakStarts: Uint32Array
  /** Objects in the tree, in DFS preorder: a dominator comes before everything it dominates. */
  preorder: Uint32Array
  groupCount: number
}

const NONE = 0xffff_ffff

export function dominatorTree(g: DominatorInput): DominatorTree {
  const n0 = g.objectCount
  const groups = g.groupCount ?? 0
  if (n0 + groups >= BY_GROUP) throw new RangeError(`${n0} objects: too many for 32-bit dominator ids`)
  let liveCount = 0
  for (let o = 0; o < n0; o++) liveCount += g.live[o]!
  // Preorder 0 is the virtual root; each root group is a vertex too, numbered when the DFS enters
  // it (so that the numbering stays a true DFS preorder), stored in vertex[] as objectCount + group.
  const size = liveCount + 1 + groups
  // pre[o]: preorder number of object o (≥ 1), 0 while unvisited.
  const pre = new Uint32Array(n0)
  const vertex = new Uint32Array(size)
  const parent = new Uint32Array(size)
  const stackV = new Uint32Array(size)
  const stackE = new Uint32Array(size)
  const follows = (from: number, to: number): boolean => g.live[to] === 1 && g.reachable[to] === g.reachable[from]
  const groupOf = (r: number): number => (g.rootGroup && g.rootGroup[r]! >= 0 && g.rootGroup[r]! < groups ? g.rootGroup[r]! : -1)

  // Pass 1: finishing order of a DFS over the leaked graph. Taken in decreasing finishing order,
  // the first unvisited vertex of each round lies in a source component of the condensation.
  const finish = leakedFinishOrder(g, pre, stackV, stackE, follows)

  // Pass 2: DFS from the virtual root: each group's root targets, the other roots' targets, then leak candidates.
  let count = 1
  const dfsFrom = (start: number, from: number): void => {
    pre[start] = count
    vertex[count] = start
    parent[count] = from
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
  // Roots in group order (groups first, ungrouped last), by a counting sort over their groups.
  const rootCount = g.rootTo.length
  const firstOfGroup = new Uint32Array(groups + 2)
  for (let r = 0; r < rootCount; r++) firstOfGroup[(groupOf(r) < 0 ? groups : groupOf(r)) + 1]!++
  for (let k = 0; k <= groups; k++) firstOfGroup[k + 1]! += firstOfGroup[k]!
  const byGroup = new Uint32Array(rootCount)
  const fill = firstOfGroup.slice(0, groups + 1)
  for (let r = 0; r < rootCount; r++) byGroup[fill[groupOf(r) < 0 ? groups : groupOf(r)]!++] = r
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
      if (pre[o] === 0 && g.live[o]) dfsFrom(o, from)
    }
  }
  const groupPre = new Uint32Array(groups)
  for (let p = 1; p < count; p++) if (vertex[p]! >= n0) groupPre[vertex[p]! - n0] = p
  const starts: number[] = []
  for (let i = finish.length - 1; i >= 0; i--) {
    const o = finish[i]!
    if (pre[o] === 0) {
      starts.push(o)
      dfsFrom(o, 0)
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
    if (o >= n0) {
      // A root group: its one predecessor is the virtual root.
      semi[w] = 0
      ancestor[w] = 0
      continue
    }
    let s = semi[w]!
    if (!g.reachable[o]) {
      if (parent[w] === 0) s = 0 // a leak start: the virtual root's edge
    } else {
      // Edges from the virtual root or a group to every root target.
      for (let r = firstAtOrAbove(g.rootTo, o); r < g.rootTo.length && g.rootTo[r] === o; r++) {
        // The virtual root's edge gives 0; a group is a predecessor like any other (numbered
        // after w when an earlier group's DFS reached w first).
        const c = groupOf(r) < 0 ? 0 : semi[evaluate(groupPre[groupOf(r)]!)]!
        if (c < s) s = c
      }
    }
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
    const o = vertex[w]!
    if (o >= n0) continue
    const d = idomPre[w]!
    idom[o] = d === 0 ? BY_VIRTUAL_ROOT : vertex[d]! >= n0 ? BY_GROUP - (vertex[d]! - n0) : vertex[d]!
  }
  // Then compacted in place (a second pass: the first reads vertex[] at lower positions): objects only, still in preorder.
  let objects = 0
  for (let w = 1; w < count; w++) if (vertex[w]! < n0) vertex[objects++] = vertex[w]!
  return {idom, leakStarts: Uint32Array.from(starts).sort(), preorder: vertex.subarray(0, objects), groupCount: groups}
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
 * before parents (reverse preorder). Each root group gets what it alone holds.
 */
export function retainedSizes(tree: DominatorTree, bytes: Float64Array): {objects: Uint32Array; groupBytes: Float64Array; groupObjects: Float64Array} {
  const n = bytes.length
  const objects = new Uint32Array(n)
  const groupBytes = new Float64Array(tree.groupCount)
  const groupObjects = new Float64Array(tree.groupCount)
  const order = tree.preorder
  for (let i = 0; i < order.length; i++) objects[order[i]!] = 1
  for (let i = order.length - 1; i >= 0; i--) {
    const o = order[i]!
    const d = tree.idom[o]!
    if (d < n) {
      bytes[d] = bytes[d]! + bytes[o]!
      objects[d] = objects[d]! + objects[o]!
    } else {
      const group = groupOfIdom(d, n, tree.groupCount)
      if (group >= 0) {
        groupBytes[group] = groupBytes[group]! + bytes[o]!
        groupObjects[group] = groupObjects[group]! + objects[o]!
      }
    }
  }
  return {objects, groupBytes, groupObjects}
}
