import type {HeapIndex} from '../index/heap-index.js'
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

/** Children of a dominator-tree node, largest retained first: ids with their retained sizes. */
export function childrenBySize(retention: RetentionIndex, id: number | null): Array<{id: number; bytes: number; objects: number}> {
  const ids = retention.children(id)
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  return Array.from(ids, (c, i) => ({id: c, bytes: bytes[i]!, objects: objects[i]!})).sort((a, b) => b.bytes - a.bytes || a.id - b.id)
}

/** What an object keeps alive: its dominator subtree to `depth` levels, `limit` children a node. */
export function dominatedBy(index: HeapIndex, retention: RetentionIndex, address: number, options: {depth: number; limit: number}) {
  const obj = index.objectAt(address)
  if (!obj) return null
  const idom = retention.idom(obj.index)
  const node = (id: number, depth: number): DominatedNode => {
    const r = retention.retained(id)
    const kids = depth > 0 ? childrenBySize(retention, id) : []
    const shown = kids.slice(0, options.limit)
    return {
      object: objectBrief(index, id),
      retainedBytes: r.bytes,
      retainedObjects: r.objects,
      children: shown.map(k => node(k.id, depth - 1)),
      childCount: depth > 0 ? kids.length : retention.children(id).length,
      otherChildrenBytes: kids.slice(options.limit).reduce((n, k) => n + k.bytes, 0),
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
