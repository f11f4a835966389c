/** parent value of an object a root points to directly. */
export const FROM_ROOT = 0xffff_fffe
/** parent value of an object no root reaches (or a free slot). */
export const UNREACHED = 0xffff_ffff

/**
 * Which objects the program can still reach, and how: breadth-first from every root over the
 * forward edges, keeping for each reached object the object it was first reached from. Following
 * parents from any object gives a shortest chain of pointers from a root to it, so a path query
 * costs only the path's length. A live object no root reaches is leaked (nothing in the process
 * can free it). Works on the CSR arrays alone, so it runs at analysis time and from an index alike.
 *
 * `memory`: where the parents and the queue go (8 bytes an object, any content; the parents are
 * shared if it is), instead of new memory: at analysis time an array the caller reads no more.
 */
export function shortestPathParents(objectCount: number, outStart: Uint32Array, outTo: Uint32Array, rootTo: Uint32Array, memory?: ArrayBufferLike): Uint32Array {
  if (objectCount >= FROM_ROOT) throw new RangeError(`${objectCount} objects: too many for 32-bit object ids`)
  const usable = memory && memory.byteLength >= 8 * objectCount ? memory : undefined
  const parent = (usable ? new Uint32Array(usable, 0, objectCount) : new Uint32Array(objectCount)).fill(UNREACHED)
  const queue = usable ? new Uint32Array(usable, 4 * objectCount, objectCount) : new Uint32Array(objectCount)
  // "Reached yet?" is asked of a bitmap, one bit an object, instead of parent[]: the question
  // comes once an edge at a random object, and the bitmap stays in the cache where parent[]
  // (32 times larger) costs a memory read each time; parent[] is written once an object.
  const reached = new Int32Array((objectCount + 31) >>> 5)
  let tail = 0
  for (let r = 0; r < rootTo.length; r++) {
    const o = rootTo[r]!
    const bit = 1 << (o & 31)
    if ((reached[o >>> 5]! & bit) === 0) {
      reached[o >>> 5]! |= bit
      parent[o] = FROM_ROOT
      queue[tail++] = o
    }
  }
  for (let head = 0; head < tail; head++) {
    const o = queue[head]!
    for (let e = outStart[o]!, end = outStart[o + 1]!; e < end; e++) {
      const to = outTo[e]!
      const bit = 1 << (to & 31)
      if ((reached[to >>> 5]! & bit) === 0) {
        reached[to >>> 5]! |= bit
        parent[to] = o
        queue[tail++] = to
      }
    }
  }
  return parent
}

/** One byte per object: 1 where a root reaches it. */
export function reachableFromParents(parent: Uint32Array): Uint8Array {
  const reached = new Uint8Array(parent.length)
  for (let o = 0; o < parent.length; o++) if (parent[o] !== UNREACHED) reached[o] = 1
  return reached
}

export function reachableFromRoots(objectCount: number, outStart: Uint32Array, outTo: Uint32Array, rootTo: Uint32Array, memory?: ArrayBufferLike): Uint8Array {
  return reachableFromParents(shortestPathParents(objectCount, outStart, outTo, rootTo, memory))
}
