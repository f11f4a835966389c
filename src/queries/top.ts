import type {HeapIndex} from '../index/heap-index.js'
import type {HeapSummary} from './heap-summary.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {largestPositions} from '../util/largest-positions.js'
import {objectBrief} from './object-brief.js'
import {nameVias} from './name-vias.js'
import {groupBrief, holderGroups, type GroupBrief, type HolderGroup} from './holder-groups.js'

/** Bytes of live objects: the share every retained size is measured against. */
export function liveBytes(index: HeapIndex): number {
  return (index.meta.summary as unknown as HeapSummary).states.find(s => s.state === 'live')!.bytes
}

/**
 * The objects that retain the most (the dominator tree's top level), with their share of the live
 * heap: the first `limit` (0: all) of all of them. `of` is how many there are, not how many the
 * index keeps ranked (TOP_OBJECTS): past those, the top level is ranked here.
 */
export function topObjects(index: HeapIndex, retention: RetentionIndex, limit: number) {
  const total = liveBytes(index)
  const ids = largestAtTop(retention, limit === 0 ? Infinity : limit)
  const bytes = retention.retainedBytesOf(ids)
  const objects = retention.retainedObjectsOf(ids)
  return {
    liveBytes: total,
    listed: ids.length,
    of: retention.childCount(null),
    objects: Array.from(ids, (id, i) => ({...objectBrief(index, id), reachable: retention.parent(id) !== null, retainedBytes: bytes[i]!, retainedObjects: objects[i]!, share: total ? bytes[i]! / total : 0})),
  }
}

/** The first `limit` objects of the dominator tree's top level, largest retained first (as the index ranks them). */
function largestAtTop(retention: RetentionIndex, limit: number): Uint32Array {
  const ranked = retention.topCount()
  const all = retention.childCount(null)
  if (limit <= ranked || ranked >= all) return retention.top(Math.min(limit, ranked))
  const kids = retention.children(null)
  const bytes = retention.retainedBytesOf(kids)
  return Uint32Array.from(largestPositions(bytes, Math.min(limit, kids.length)), i => kids[i]!)
}

/**
 * Retained bytes per type, each byte once (an object inside another of its type adds nothing); and
 * per group of untyped blocks (one size, one holder: holder-groups.ts) likewise, ranked together.
 * An untyped row has `type` null and says its group in `blocks`.
 */
export function topTypes(index: HeapIndex, retention: RetentionIndex, limit: number) {
  const total = liveBytes(index)
  const {bytes, objects} = retention.typeRetained()
  const vias = nameVias(index)
  type Row = {type: string | null; via?: string; retainedBytes: number; retainedObjects: number; share: number; blocks?: GroupBrief}
  const rows: Array<Row & {group?: HolderGroup}> = []
  for (let t = 1; t < bytes.length; t++) {
    if (bytes[t]! > 0) rows.push({type: index.meta.typeNames[t - 1]!, via: vias[t]!, retainedBytes: bytes[t]!, retainedObjects: objects[t]!, share: total ? bytes[t]! / total : 0})
  }
  for (const g of holderGroups(index, 'all')) {
    if (g.retainedBytes > 0) rows.push({type: null, retainedBytes: g.retainedBytes, retainedObjects: g.retainedObjects, share: total ? g.retainedBytes / total : 0, group: g})
  }
  rows.sort((a, b) => b.retainedBytes - a.retainedBytes || (a.group ? 1 : 0) - (b.group ? 1 : 0) || ((a.type ?? '') < (b.type ?? '') ? -1 : 1))
  // The groups' examples are named (a read of the index each) only for the rows listed.
  const listed: Row[] = rows.slice(0, limit === 0 ? rows.length : limit).map(({group, ...r}) => (group ? {...r, blocks: groupBrief(index, group, total)} : r))
  return {liveBytes: total, listed: listed.length, of: rows.length, types: listed}
}
