/**
 * Which objects the program can still reach: breadth-first from every root over the forward
 * edges. A live object no root reaches is leaked (nothing in the process can free it). Works on
 * the CSR arrays alone, so it runs at analysis time and from an index alike.
 */
export function reachableFromRoots(objectCount: number, outStart: Uint32Array, outTo: Uint32Array, rootTo: Uint32Array): Uint8Array {
  const reached = new Uint8Array(objectCount)
  const queue = new Uint32Array(objectCount)
  let tail = 0
  for (let r = 0; r < rootTo.length; r++) {
    const o = rootTo[r]!
    if (!reached[o]) {
      reached[o] = 1
      queue[tail++] = o
    }
  }
  for (let head = 0; head < tail; head++) {
    const o = queue[head]!
    for (let e = outStart[o]!, end = outStart[o + 1]!; e < end; e++) {
      const to = outTo[e]!
      if (!reached[to]) {
        reached[to] = 1
        queue[tail++] = to
      }
    }
  }
  return reached
}
