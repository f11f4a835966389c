import {regionOf, type RootRegion} from '../graph/root-regions.js'
import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {u64le} from '../util/u64le.js'
import {rootRefLabel} from './root-label.js'

/** A word in a global or a thread's stack that points into a mapping: what keeps the mapping meaningful to the program. */
export interface MappingAnchor {
  /** Where the pointer lies. */
  address: number
  /** `conn_arena+0x0 (slabcache)`, `thread 12 #2 worker_main …`: the root's label. */
  label: string
  /** The pointer's target, from the range's start. */
  pointsAt: number
}

/** `conn_arena+0x0 (slabcache), pointing at +0x0`. */
export const anchorText = (a: MappingAnchor) => `${a.label}, pointing at +${hex(a.pointsAt)}`

/**
 * The globals and stack slots that point into each range [start, end): every scanned root region
 * of those kinds (index.meta.rootRegions) read word by word, once for all ranges; at most `cap`
 * anchors a range. Only words the core holds count: a range nothing points to gets none. A target
 * `skip` says is something else's (a heap object in a mapping that also holds spans) is no anchor.
 */
export function mappingAnchors(program: Program, index: HeapIndex, ranges: ReadonlyArray<{start: number; end: number}>, cap: number, skip?: (target: number) => boolean): MappingAnchor[][] {
  const found: MappingAnchor[][] = ranges.map(() => [])
  if (!ranges.length) return found
  const regions: RootRegion[] = index.meta.rootRegions ?? []
  const order = ranges.map((r, i) => ({...r, i})).sort((a, b) => a.start - b.start)
  const lo = order[0]!.start
  const hi = order.reduce((m, r) => Math.max(m, r.end), 0)
  const memory = program.core.memory
  for (const region of regions) {
    if (region.kind !== 'global' && region.kind !== 'stack') continue
    const bytes = memory.readBytes(region.start, region.end - region.start)
    if (!bytes) continue
    for (let at = 0; at + 8 <= bytes.length; at += 8) {
      const v = u64le(bytes, at)
      if (v < lo || v >= hi) continue
      const r = regionOf(order, v)
      if (!r || found[r.i]!.length >= cap || skip?.(v)) continue
      const address = region.start + at
      const label = rootRefLabel(program, index, {kind: region.kind, thread: region.thread, address, to: -1, toOffset: 0})
      found[r.i]!.push({address, label, pointsAt: v - r.start})
    }
  }
  return found
}
