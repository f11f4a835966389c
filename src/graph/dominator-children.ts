import {sharedUint32} from '../util/shared-arrays.js'
import {NOT_IN_TREE} from './dominators.js'

/** The dominator tree's child lists: the children of o are child[childStart[o] .. childStart[o+1]); the virtual root's at o = objectCount. */
export interface DominatorChildren {
  childStart: Uint32Array
  child: Uint32Array
}

/** Child lists by counting sort over idom (children ascending); the root groups' children count as the virtual root's. */
export function dominatorChildren(idom: Uint32Array, n: number): DominatorChildren {
  // Shared: the thread that built them and the one that reorders and writes them both see them.
  const childStart = sharedUint32(n + 2)
  let inTree = 0
  for (let o = 0; o < n; o++) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    childStart[(d >= n ? n : d) + 1]!++
    inTree++
  }
  for (let i = 0; i <= n; i++) childStart[i + 1]! += childStart[i]!
  const child = sharedUint32(inTree)
  const fill = childStart.slice(0, n + 1)
  for (let o = 0; o < n; o++) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    child[fill[d >= n ? n : d]!++] = o
  }
  return {childStart, child}
}
