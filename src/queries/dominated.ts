import type {HeapIndex} from '../index/heap-index.js'
import {largestPositions} from '../util/largest-positions.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {objectBrief, type ObjectBrief} from './object-brief.js'

export interface DominatedNode {
  object: ObjectBrief
  retainedBytes: number
  retainedObjects: number
  /** Children in the dominator tree, largest retained first (the first `limit`). */
  children: DominatedNode[]
  childCount: number
  /** Retained bytes of the children not listed. */
  otherChildrenBytes: number
}

/**
 * Children of a dominator-tree node, the `limit` largest by retained bytes first, with how many
 * there are and what the others retain: a node with millions of children (a big array) is
 * selected from, not sorted whole.
 */
export function childrenBySize(retention: RetentionIndex, id: number | null, limit = Number.POSITIVE_INFINITY) {
  const ids = retention.children(id)
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  const order = largestPositions(bytes, Math.min(limit, ids.length))
  const top = order.map(i => ({id: ids[i]!, bytes: bytes[i]!, objects: objects[i]!}))
  let total = 0
  for (let i = 0; i < bytes.length; i++) total += bytes[i]!
  return {top, count: ids.length, otherBytes: total - top.reduce((n, c) => n + c.bytes, 0)}
}

/** What an object keeps alive: its dominator subtree to `depth` levels, `limit` children a node. */
export function dominatedBy(index: HeapIndex, retention: RetentionIndex, address: number, options: {depth: number; limit: number}) {
  const obj = index.objectAt(address)
  if (!obj) return null
  const idom = retention.idom(obj.index)
  const node = (id: number, depth: number): DominatedNode => {
    const r = retention.retained(id)
    const kids = depth > 0 ? childrenBySize(retention, id, options.limit) : null
    return {
      object: objectBrief(index, id),
      retainedBytes: r.bytes,
      retainedObjects: r.objects,
      children: kids ? kids.top.map(k => node(k.id, depth - 1)) : [],
      childCount: kids ? kids.count : retention.children(id).length,
      otherChildrenBytes: kids ? kids.otherBytes : 0,
    }
  }
  return {
    offset: address - obj.start,
    inTree: idom !== null,
    immediateDominator: typeof idom === 'number' ? objectBrief(index, idom) : null,
    /** Held only by one thread's registers, stack and TLS (no single object dominates it). */
    onlyThread: typeof idom === 'object' && idom !== null ? idom.thread : null,
    tree: node(obj.index, idom === null ? 0 : options.depth),
  }
}

export type Dominated = NonNullable<ReturnType<typeof dominatedBy>>
