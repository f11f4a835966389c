import {grown} from './dominator-walk.js'

/**
 * Sums over the dominator tree's child lists, each object's after all of its children's (a
 * depth-first walk down from the virtual root), rather than over idom in reverse preorder
 * (dominators.ts: retainedSizes). A memory limit asks for it: the child lists are all it reads, so
 * idom and the preorder go before the sums are allocated, and it sums one array at a time (the
 * object counts, written and let go, then the bytes), so that the two are never held together.
 * The sums are the same: each is of whole numbers below 2^53, exact in any order.
 *
 * `values` comes in holding each object's own value (its shallow size, or 1 to count it: see
 * `treeObjectsCounted`) and is summed in place into what its subtree holds. `rootChildGroup`: per
 * child of the virtual root, in its list's order, the root group that dominates it, or −1; each
 * group gets what it alone holds.
 */
export function subtreeSumsByChildren(childStart: Uint32Array, child: Uint32Array, rootChildGroup: Int32Array, groupCount: number, values: Float64Array | Uint32Array): Float64Array {
  const n = childStart.length - 2
  const groupSums = new Float64Array(groupCount)
  // One path of the tree: sized for a shallow one, grown for a deep one (a long list).
  let stackNode = new Uint32Array(1 << 12)
  let stackNext = new Uint32Array(1 << 12)
  const first = childStart[n]!
  for (let i = first, end = childStart[n + 1]!; i < end; i++) {
    const top = child[i]!
    stackNode[0] = top
    stackNext[0] = childStart[top]!
    let sp = 1
    while (sp > 0) {
      const v = stackNode[sp - 1]!
      const next = stackNext[sp - 1]!
      if (next < childStart[v + 1]!) {
        stackNext[sp - 1] = next + 1
        const c = child[next]!
        if (childStart[c] === childStart[c + 1]) {
          // A leaf (most objects): itself only.
          values[v] = values[v]! + values[c]!
          continue
        }
        if (sp === stackNode.length) {
          stackNode = grown(stackNode)
          stackNext = grown(stackNext)
        }
        stackNode[sp] = c
        stackNext[sp] = childStart[c]!
        sp++
        continue
      }
      // Done with v's subtree: its share of its dominator's.
      if (--sp > 0) {
        const d = stackNode[sp - 1]!
        values[d] = values[d]! + values[v]!
      }
    }
    const group = rootChildGroup[i - first]!
    if (group >= 0) groupSums[group] = groupSums[group]! + values[top]!
  }
  return groupSums
}

/** An array of `n` counts, 1 for each object in the tree (each is some node's child once), 0 for the rest: the retained object counts' own values. */
export function treeObjectsCounted(n: number, child: Uint32Array): Uint32Array {
  const counts = new Uint32Array(n)
  for (let i = 0; i < child.length; i++) counts[child[i]!] = 1
  return counts
}
