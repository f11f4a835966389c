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
 * Children a page ranks by retained size at most: each one's size is a read of the index (they lie
 * anywhere in it), and a page answers in milliseconds. A node with more (a table of millions of
 * pointers) is listed as the index keeps its children: the largest first, then by address.
 */
export const RANK_AT_MOST = 10_000

/**
 * One page of a dominator-tree node's children, `rows` a page: by retained size, largest first
 * (`ranked`), where the node has at most RANK_AT_MOST children; else its largest first, then the
 * others by address. The virtual root's (`id` null) first ranks are always by size: the index's
 * ranked top (dom.top; no other child retains more than its last); past them, the others, ranked
 * or by address by the same rule.
 */
export function childrenPage(retention: RetentionIndex, id: number | null, page: number, rows: number, rankAtMost = RANK_AT_MOST) {
  const count = retention.childCount(id)
  const ranked = count <= rankAtMost
  const from = page * rows
  const top = id === null ? retention.top(Math.min(from + rows, retention.topCount())) : new Uint32Array(0)
  const shown: number[] = Array.from(top.subarray(Math.min(from, top.length)))
  const skip = Math.max(0, from - top.length)
  const want = rows - shown.length
  if (want > 0 && top.length < count) {
    const inTop = new Set(top)
    if (ranked) {
      const kids = retention.children(id)
      const bytes = retention.retainedBytesOf(kids)
      for (let i = 0; i < kids.length; i++) if (inTop.has(kids[i]!)) bytes[i] = -1
      const order = largestPositions(bytes, Math.min(skip + want, kids.length - inTop.size))
      for (const i of order.slice(skip)) shown.push(kids[i]!)
    } else if (id !== null) shown.push(...retention.children(id, want, skip))
    else {
      // In the index's order, the top's own left out: read from the start up to this page (a page's
      // rows and the pages before it, not the whole list).
      let seen = 0
      for (let at = 0; shown.length < rows && at < count; at += 65536) {
        for (const k of retention.children(id, 65536, at)) {
          if (inTop.has(k)) continue
          if (seen++ >= skip) shown.push(k)
          if (shown.length >= rows) break
        }
      }
    }
  }
  const ids = Uint32Array.from(shown)
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  return {count, ranked: ranked || from + rows <= top.length, children: Array.from(ids, (child, i) => ({id: child, bytes: bytes[i]!, objects: objects[i]!}))}
}
