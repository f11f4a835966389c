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

/**
 * One page of a dominator-tree node's children, largest retained first: ranks [page × rows,
 * (page + 1) × rows), with how many children there are. The virtual root's (`id` null) first
 * ranks are the index's ranked top (dom.top, no other child retains more than its last), the
 * ranks past it picked from the others; any other node's, by childrenBySize.
 */
export function childrenPage(retention: RetentionIndex, id: number | null, page: number, rows: number) {
  const want = (page + 1) * rows
  const count = retention.childCount(id)
  const ranked = id === null ? retention.topCount() : 0
  let ids: Uint32Array
  if (want <= ranked || (id === null && ranked >= count)) ids = retention.top(Math.min(want, ranked))
  else if (ranked === 0) ids = Uint32Array.from(childrenBySize(retention, id, want).top, c => c.id)
  else {
    const kids = retention.children(null)
    const bytes = retention.retainedBytesOf(kids)
    const top = retention.top(ranked)
    const inTop = new Set(top)
    for (let i = 0; i < kids.length; i++) if (inTop.has(kids[i]!)) bytes[i] = -1
    const rest = largestPositions(bytes, Math.min(want - ranked, kids.length - ranked))
    ids = Uint32Array.from([...top, ...rest.map(i => kids[i]!)])
  }
  const shown = ids.subarray(Math.min(page * rows, ids.length))
  const bytes = retention.retainedBytesOf(shown)
  const objects = retention.retainedObjectsOf(shown)
  return {count, children: Array.from(shown, (child, i) => ({id: child, bytes: bytes[i]!, objects: objects[i]!}))}
}
