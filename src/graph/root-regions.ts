import {hex} from '../errors.js'
import {ROOT_KIND_NAMES, type RootKindName} from './csr.js'
import type {GraphFacts} from './scan.js'

/** A scanned root region as the index keeps it (JSON): what a root found in it is. */
export interface RootRegion {
  kind: RootKindName
  /** Thread id of a stack or TLS region, null otherwise. */
  thread: number | null
  start: number
  end: number
  /** Start of the mapping, block or segment the region is part of: offsets count from here. */
  base: number
  label: string
}

/** The regions of the kinds that were scanned, sorted by start. */
export function rootRegions(graph: Pick<GraphFacts, 'roots'>): RootRegion[] {
  return graph.roots.ranges
    .filter(r => graph.roots.kinds.has(r.kind))
    .map(r => ({kind: ROOT_KIND_NAMES[r.kind], thread: r.thread < 0 ? null : r.thread, start: r.start, end: r.end, base: r.base, label: r.label}))
    .sort((a, b) => a.start - b.start)
}

/** The region (sorted by start, not overlapping) holding a root's address, or undefined (a register, or an index made before regions were kept). */
export function regionOf<R extends {start: number; end: number}>(regions: readonly R[] | undefined, address: number): R | undefined {
  if (!regions) return undefined
  let lo = 0
  let hi = regions.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (regions[mid]!.start <= address) lo = mid + 1
    else hi = mid
  }
  const r = regions[lo - 1]
  return r && address < r.end ? r : undefined
}

/** `anonymous mapping 0x7f…000-0x7f…000 +0x40`: the region's label and the root's offset in it. */
export function regionLabel(region: RootRegion, address: number): string {
  const off = address - region.base
  return `${region.label} ${off < 0 ? '-' : '+'}${hex(Math.abs(off))}`
}
