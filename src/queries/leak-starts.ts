import type {HeapIndex} from '../index/heap-index.js'
import {RetentionIndex} from '../index/retention-index.js'
import {objectBrief} from './object-brief.js'

/**
 * One page of where leaked structures start (nothing else leaked points to them), largest retained
 * first, from the index's list of starts alone: no pass over the objects (leaksOf's per-type
 * counts make one), so a page of a 30 M-object core costs the starts, not the heap.
 * TCMalloc's own unreferenced allocations start no leak of the program's.
 */
export function leakStartsPage(index: HeapIndex, first: number, limit: number) {
  const retention = new RetentionIndex(index)
  const ids = retention.leakStarts().filter(id => index.reachability(id) === 'leaked')
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  const order = Array.from(ids.keys()).sort((a, b) => bytes[b]! - bytes[a]! || ids[a]! - ids[b]!)
  return {
    total: ids.length,
    starts: order.slice(first, first + limit).map(k => ({...objectBrief(index, ids[k]!), retainedBytes: bytes[k]!, retainedObjects: objects[k]!, pointedToBy: index.inDegree(ids[k]!)})),
  }
}
