import {ACCUMULATED_GROUPS, GroupTally, type AccumulatedGroup, type RetainedBytes} from './accumulation.js'
import type {TypeIds} from '../graph/object-types.js'

/**
 * A depth-first walk of the dominator tree for two sums. Retained bytes per type, each byte once:
 * an object adds its retained size to its type unless one of its dominators has the same type (it
 * is then inside that one's retained size already), kept by counting, per type, the objects of it
 * open above. And what lies under each accumulation point: every object below it, by type or size
 * class, at its own size (its retained bytes minus its children's, summed as the walk leaves it,
 * so no array of shallow sizes has to be kept). A type's objects are counted as the walk leaves
 * each subtree, too: no array of retained object counts has to be kept beside the bytes (under a
 * memory limit it is in the index by then, and out of memory).
 *
 * A walk covers a range of the virtual root's children. Both sums are exact over any split of
 * those children: a type's open count starts at zero under the virtual root (which has no type),
 * and each point lies under one of them. So two threads walk one part each (retention.ts), and
 * `mergedWalks` adds their sums.
 */
export interface TreeWalkInput {
  /** The tree's child lists (dominator-children.ts); the virtual root's at objectCount. */
  childStart: Uint32Array
  child: Uint32Array
  /** Type id per object (0 untyped), and the number of ids. */
  typeOf: TypeIds
  typeCount: number
  /**
   * Where given, the type ids are read through it instead of `typeOf` (under a memory limit they
   * wait in a scratch file, read through a cache of blocks: analyze-core.ts). This thread only:
   * a function does not go to a worker.
   */
  typeAt?: (object: number) => number
  retainedBytes: RetainedBytes
  /** Accumulation points (objects), each in a subtree of its own. */
  points: number[]
  /** The virtual root's children walked: positions [from, to) of its child list. */
  from: number
  to: number
}

export interface TreeWalkSums {
  /** Per type id: bytes and objects its objects retain, each once. */
  bytes: Float64Array
  objects: Float64Array
  /** Per point: the objects under it and its largest groups (none when the walk did not cover it). */
  under: Array<{objects: number; groups: AccumulatedGroup[]}>
}

export function walkDominatorTree(part: TreeWalkInput): TreeWalkSums {
  const {childStart, child, typeOf, typeCount, retainedBytes, points} = part
  const typeAt = part.typeAt ?? ((o: number): number => typeOf[o]!)
  const n = childStart.length - 2
  const bytes = new Float64Array(typeCount)
  const objects = new Float64Array(typeCount)
  const open = new Uint32Array(typeCount)
  const pointOf = new Map(points.map((p, k) => [p, k]))
  const tallies = points.map(() => new GroupTally(typeCount))
  // The stack holds one path of the tree: sized for a shallow tree and grown when one is deep
  // (a long list), instead of for the worst case (every object, 8 bytes each) up front.
  let stackNode = new Uint32Array(Math.min(child.length + 1, 1 << 16))
  let stackNext = new Uint32Array(stackNode.length)
  // Per stack level: the objects of its subtree seen so far (itself, and its children's left).
  let stackObjects = new Uint32Array(stackNode.length)
  // Per stack level: the retained bytes of the children left so far (only while under a point).
  let childBytes = new Float64Array(1024)
  // The accumulation point being walked under (points lie in disjoint subtrees), and its level.
  let tally: GroupTally | null = null
  let tallyLevel = -1
  const rootEnd = childStart[n]! + Math.min(part.to, childStart[n + 1]! - childStart[n]!)
  stackNode[0] = n
  stackNext[0] = childStart[n]! + part.from
  stackObjects[0] = 0
  let sp = 1
  while (sp > 0) {
    const v = stackNode[sp - 1]!
    const next = stackNext[sp - 1]!
    if (next < (sp === 1 ? rootEnd : childStart[v + 1]!)) {
      stackNext[sp - 1] = next + 1
      const c = child[next]!
      const t = typeAt(c)
      const first = childStart[c]!
      if (t > 0 && open[t] === 0) bytes[t] = bytes[t]! + retainedBytes[c]!
      if (tally) childBytes[sp - 1] = childBytes[sp - 1]! + retainedBytes[c]!
      if (first === childStart[c + 1]! && !(tally === null && pointOf.has(c))) {
        // A leaf (most objects): entered and left at once, without the stack.
        if (t > 0 && open[t] === 0) objects[t] = objects[t]! + 1
        stackObjects[sp - 1] = stackObjects[sp - 1]! + 1
        tally?.add(t, retainedBytes[c]!)
        continue
      }
      if (t > 0) open[t]!++
      if (tally) {
        if (sp >= childBytes.length) childBytes = grown(childBytes)
        childBytes[sp] = 0
      } else if (pointOf.has(c)) {
        tally = tallies[pointOf.get(c)!]!
        tallyLevel = sp
        if (sp >= childBytes.length) childBytes = new Float64Array(2 * sp)
        childBytes[sp] = 0
      }
      if (sp === stackNode.length) {
        stackNode = grown(stackNode)
        stackNext = grown(stackNext)
        stackObjects = grown(stackObjects)
      }
      stackNode[sp] = c
      stackNext[sp] = first
      stackObjects[sp] = 1
      sp++
    } else {
      sp--
      const subtreeObjects = stackObjects[sp]!
      if (sp > 0) stackObjects[sp - 1] = stackObjects[sp - 1]! + subtreeObjects
      const tv = v < n ? typeAt(v) : 0
      // Open no more: where none of its type is open above it, it retains its subtree's objects for its type.
      if (tv > 0 && --open[tv]! === 0) objects[tv] = objects[tv]! + subtreeObjects
      if (tally) {
        if (sp === tallyLevel) tally = null
        else tally.add(tv, retainedBytes[v]! - childBytes[sp]!)
      }
    }
  }
  return {bytes, objects, under: tallies.map(t => ({objects: t.objects, groups: t.largest(ACCUMULATED_GROUPS)}))}
}

/** The sums of two walks over disjoint parts of the virtual root's children. */
export function mergedWalks(a: TreeWalkSums, b: TreeWalkSums): TreeWalkSums {
  const bytes = a.bytes.map((x, t) => x + b.bytes[t]!)
  const objects = a.objects.map((x, t) => x + b.objects[t]!)
  // A point lies under one part: the other walk found nothing under it.
  const under = a.under.map((u, k) => (u.objects > 0 ? u : b.under[k]!))
  return {bytes, objects, under}
}

/**
 * Where to cut the virtual root's child list so that each part holds about half of the objects
 * a walk visits: `rootObjects` holds each of its children's retained objects (its subtree's size),
 * in the list's order.
 */
export function balancedSplit(rootObjects: ArrayLike<number>): number {
  const count = rootObjects.length
  let total = 0
  for (let i = 0; i < count; i++) total += rootObjects[i]!
  let sum = 0
  for (let i = 0; i < count; i++) {
    if (2 * sum >= total) return i
    sum += rootObjects[i]!
  }
  return count
}

/** A copy of the array at twice its length. */
export function grown<T extends Uint32Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(a: T): T {
  const b = new (a.constructor as new (length: number) => T)(2 * a.length)
  b.set(a as ArrayLike<number>)
  return b
}
