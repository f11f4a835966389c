import {sharedUint32} from '../util/shared-arrays.js'
import {NOT_IN_TREE} from './dominators.js'

/** The dominator tree's child lists: the children of o are child[childStart[o] .. childStart[o+1]); the virtual root's at o = objectCount. */
export interface DominatorChildren {
  childStart: Uint32Array
  child: Uint32Array
}

/**
 * Child lists by counting sort over idom (children ascending); the root groups' children count as
 * the virtual root's. The counts become each list's end, and the lists are filled backwards from
 * there (objects in decreasing order, so each list comes out ascending), which leaves each count at
 * its list's start: no second array of cursors (4 bytes an object slot, all of it freshly touched).
 * The lists go into arrays of `spare` (the dominator pass's, free now) where one is large enough,
 * else into new ones: shared either way when the thread that built them is not the one that
 * reorders and writes them.
 */
export function dominatorChildren(idom: Uint32Array, n: number, spare: Uint32Array[] = []): DominatorChildren {
  const childStart = reused(spare, n + 2)?.fill(0) ?? sharedUint32(n + 2)
  let inTree = 0
  for (let o = 0; o < n; o++) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    childStart[d >= n ? n : d]!++
    inTree++
  }
  for (let i = 1; i <= n; i++) childStart[i]! += childStart[i - 1]!
  childStart[n + 1] = inTree
  const child = reused(spare, inTree) ?? sharedUint32(inTree)
  for (let o = n - 1; o >= 0; o--) {
    const d = idom[o]!
    if (d === NOT_IN_TREE) continue
    child[--childStart[d >= n ? n : d]!] = o
  }
  return {childStart, child}
}

/** The first `length` entries of the first array of `spare` that has them, taken out of `spare`. */
function reused(spare: Uint32Array[], length: number): Uint32Array | undefined {
  const i = spare.findIndex(a => a.length >= length)
  return i < 0 ? undefined : spare.splice(i, 1)[0]!.subarray(0, length)
}
