import type {HeapIndex} from '../index/heap-index.js'
import type {HeapSummary} from './heap-summary.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {objectBrief} from './object-brief.js'

/** Bytes of live objects: the share every retained size is measured against. */
export function liveBytes(index: HeapIndex): number {
  return (index.meta.summary as unknown as HeapSummary).states.find(s => s.state === 'live')!.bytes
}

/** The objects that retain the most (the dominator tree's top level), with their share of the live heap. */
export function topObjects(index: HeapIndex, retention: RetentionIndex, limit: number) {
  const total = liveBytes(index)
  const ids = retention.top(limit)
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  return {
    liveBytes: total,
    listed: ids.length,
    of: retention.topCount(),
    objects: Array.from(ids, (id, i) => ({...objectBrief(index, id), reachable: retention.parent(id) !== null, retainedBytes: bytes[i]!, retainedObjects: objects[i]!, share: total ? bytes[i]! / total : 0})),
  }
}

/** Retained bytes per type, each byte once (an object inside another of its type adds nothing). */
export function topTypes(index: HeapIndex, retention: RetentionIndex, limit: number) {
  const total = liveBytes(index)
  const {bytes, objects} = retention.typeRetained()
  const rows: Array<{type: string; retainedBytes: number; retainedObjects: number; share: number}> = []
  for (let t = 1; t < bytes.length; t++) {
    if (bytes[t]! > 0) rows.push({type: index.meta.typeNames[t - 1]!, retainedBytes: bytes[t]!, retainedObjects: objects[t]!, share: total ? bytes[t]! / total : 0})
  }
  rows.sort((a, b) => b.retainedBytes - a.retainedBytes || (a.type < b.type ? -1 : 1))
  return {liveBytes: total, listed: Math.min(limit, rows.length), of: rows.length, types: rows.slice(0, limit)}
}
