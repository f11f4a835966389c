import {grown} from './dominator-walk.js'

/**
 * Retained bytes and objects summed over the dominator tree's child lists, each object's after
 * all of its children's (a depth-first walk down from the virtual root), rather than over idom in
 * reverse preorder (dominators.ts: retainedSizes). A memory limit asks for it: the child lists are
 * all it reads, so idom and the preorder (8 bytes an object slot) go before the sums' 12 bytes a
 * slot are allocated. The sums are the same: each is of whole numbers below 2^53, exact in any order.
 *
 * `bytes` comes in holding each live object's shallow size and is summed in place; `objects`
 * comes in zeroed. `rootChildGroup`: per child of the virtual root, in its list's order, the root
 * group that dominates it, or −1; each group gets what it alone holds.
 */
export function retainedSizesByChildren(childStart: Uint32Array, child: Uint32Array, rootChildGroup: Int32Array, groupCount: number, bytes: Float64Array, objects: Uint32Array): {groupBytes: Float64Array; groupObjects: Float64Array} {
  const n = childStart.length - 2
  const groupBytes = new Float64Array(groupCount)
  const groupObjects = new Float64Array(groupCount)
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
          objects[c] = 1
          bytes[v] = bytes[v]! + bytes[c]!
          objects[v] = objects[v]! + 1
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
      // Done with v's subtree: now itself, then its share of its dominator's.
      objects[v] = objects[v]! + 1
      if (--sp > 0) {
        const d = stackNode[sp - 1]!
        bytes[d] = bytes[d]! + bytes[v]!
        objects[d] = objects[d]! + objects[v]!
      }
    }
    const group = rootChildGroup[i - first]!
    if (group >= 0) {
      groupBytes[group] = groupBytes[group]! + bytes[top]!
      groupObjects[group] = groupObjects[group]! + objects[top]!
    }
  }
  return {groupBytes, groupObjects}
}
