import type {HeapIndex} from '../index/heap-index.js'
import {RetentionIndex} from '../index/retention-index.js'
import {objectBrief, type ObjectBrief} from './object-brief.js'
import type {KeptPairs} from './diff-objects.js'

/** Kept objects looked at (largest growth first) when finding the holders they grow under. */
const CANDIDATES = 256
/** Steps up the dominator tree from one object to the holder it grows under. */
const MAX_CLIMB = 100_000

/** A kept object whose retained size grew, and the pointer field (of its own) under which most of it grew. */
export interface Growth {
  holder: ObjectBrief
  retainedBefore: number
  retainedAfter: number
  growth: number
  /** The dominator-tree child that grew the most, and the holder's field pointing to it (null: no pointer of the holder's own reaches it directly). */
  via: {offset: number | null; child: ObjectBrief; growth: number; born: boolean} | null
}

/**
 * The kept objects whose retained size grew most, each attributed to its holder: the outermost
 * kept object above it in the new core's dominator tree whose retained size grew too (the growth
 * of a vector's buffer is the growth of the cache that owns the vector). For each holder, the
 * "via" is its dominator child that grew the most, reached through the holder's pointer at `offset`.
 */
export function retainedGrowth(before: HeapIndex, after: HeapIndex, kept: KeptPairs, limit: number): {holders: Growth[]; keptGrown: number} {
  const rb = before.columns.retainedBytes()
  const ra = after.columns.retainedBytes()
  // Slot of the new core -> slot of the old one, for kept objects.
  const oldOf = new Map<number, number>()
  for (let k = 0; k < kept.after.length; k++) oldOf.set(kept.after[k]!, kept.before[k]!)
  const growthOf = (slot: number) => {
    const old = oldOf.get(slot)
    return old === undefined ? ra[slot]! : ra[slot]! - rb[old]!
  }
  const grown: number[] = []
  for (let k = 0; k < kept.after.length; k++) if (growthOf(kept.after[k]!) > 0) grown.push(kept.after[k]!)
  grown.sort((x, y) => growthOf(y) - growthOf(x) || x - y)

  const retention = new RetentionIndex(after)
  const holders = new Set<number>()
  for (const slot of grown.slice(0, CANDIDATES)) {
    let at = slot
    for (let step = 0; step < MAX_CLIMB; step++) {
      const up = retention.idom(at)
      if (typeof up !== 'number' || !oldOf.has(up) || growthOf(up) <= 0) break
      at = up
    }
    holders.add(at)
  }
  const ranked = [...holders].sort((x, y) => growthOf(y) - growthOf(x) || x - y).slice(0, limit)
  return {
    keptGrown: grown.length,
    holders: ranked.map(slot => ({
      holder: objectBrief(after, slot),
      retainedBefore: rb[oldOf.get(slot)!]!,
      retainedAfter: ra[slot]!,
      growth: growthOf(slot),
      via: largestChild(after, retention, slot, growthOf, oldOf),
    })),
  }
}

function largestChild(index: HeapIndex, retention: RetentionIndex, slot: number, growthOf: (s: number) => number, oldOf: Map<number, number>): Growth['via'] {
  let best = -1
  for (const c of retention.children(slot)) if (best < 0 || growthOf(c) > growthOf(best)) best = c
  if (best < 0 || growthOf(best) <= 0) return null
  const edge = index.edgeBetween(slot, best)
  return {offset: edge ? edge.offset : null, child: objectBrief(index, best), growth: growthOf(best), born: !oldOf.has(best)}
}
