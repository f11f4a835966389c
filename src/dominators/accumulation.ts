/**
 * Where the memory a big holder retains piles up (Eclipse MAT's accumulation point) and what
 * lies there, computed once at analysis for every object the virtual root alone dominates that
 * retains at least ACCUMULATION_MIN_SHARE of the live heap (the least `suspects` threshold), so a
 * suspects query reads an exact answer instead of walking millions of objects.
 */

/**
 * Retained bytes per object slot: the index's f64, or u32 where the live objects' bytes total less
 * than 2^32, so that no sum can pass it (retention.ts: the sums over the child lists).
 */
export type RetainedBytes = Float64Array | Uint32Array

/** Walk down while one child keeps at least this share of its parent's retained bytes. */
export const ONE_CHILD_KEEPS = 0.8
/** Steps down a chain of single big children (a linked list) before the walk stops and says so. */
export const MAX_ACCUMULATION_STEPS = 256
/** Groups (types, or size classes of untyped objects) kept per accumulation point. */
export const ACCUMULATED_GROUPS = 5
/**
 * Holders retaining at least this share of the live heap get their accumulation point computed:
 * a little under the least `suspects` threshold (1 %), so that a sum rounded differently at query
 * time cannot leave a suspect without its point.
 */
export const ACCUMULATION_MIN_SHARE = 0.009

export interface AccumulatedGroup {
  /** Type id (≥ 1), or 0 for untyped objects of `size` bytes. */
  type: number
  size: number
  objects: number
  bytes: number
}

export interface Accumulation {
  holder: number
  point: number
  /** Steps from the holder down to the point (0: the holder itself). */
  depth: number
  /** The walk stopped after MAX_ACCUMULATION_STEPS single big children before any fan-out. */
  cut: boolean
  /** Objects under the point (its dominator subtree without itself), all of them counted. */
  objects: number
  /** The largest groups under the point by bytes. */
  groups: AccumulatedGroup[]
}

/**
 * The accumulation point of each holder: down the dominator tree while the largest child (first
 * in its list: retention.ts puts it there) keeps ONE_CHILD_KEEPS of the bytes.
 */
export function accumulationPoints(childStart: Uint32Array, child: Uint32Array, retainedBytes: RetainedBytes, holders: Uint32Array, minBytes: number) {
  const points: Array<{holder: number; point: number; depth: number; cut: boolean}> = []
  for (const holder of holders) {
    if (!(retainedBytes[holder]! >= minBytes) || minBytes <= 0) continue
    let at = holder
    let depth = 0
    while (depth < MAX_ACCUMULATION_STEPS && childStart[at + 1]! > childStart[at]!) {
      const big = child[childStart[at]!]!
      if (retainedBytes[big]! < ONE_CHILD_KEEPS * retainedBytes[at]!) break
      at = big
      depth++
    }
    points.push({holder, point: at, depth, cut: depth >= MAX_ACCUMULATION_STEPS})
  }
  return points
}

/** Untyped objects up to this size are tallied in a flat array by size / 8; larger ones in a map. */
const FLAT_SIZES = 1 << 15

/** Bytes and objects per group under one accumulation point, in typed arrays (millions of adds). */
export class GroupTally {
  private readonly typeBytes: Float64Array
  private readonly typeObjects: Float64Array
  private readonly sizeObjects = new Float64Array(FLAT_SIZES)
  private readonly bigSizes = new Map<number, number>()
  objects = 0

  constructor(typeCount: number) {
    this.typeBytes = new Float64Array(typeCount)
    this.typeObjects = new Float64Array(typeCount)
  }

  add(type: number, size: number): void {
    this.objects++
    if (type > 0) {
      this.typeBytes[type] = this.typeBytes[type]! + size
      this.typeObjects[type]!++
    } else if (size % 8 === 0 && size / 8 < FLAT_SIZES) this.sizeObjects[size / 8]!++
    else this.bigSizes.set(size, (this.bigSizes.get(size) ?? 0) + 1)
  }

  /** The largest groups by bytes (ties: typed before untyped, then by type id or size). */
  largest(k: number): AccumulatedGroup[] {
    const all: AccumulatedGroup[] = []
    for (let t = 1; t < this.typeBytes.length; t++) if (this.typeObjects[t]! > 0) all.push({type: t, size: 0, objects: this.typeObjects[t]!, bytes: this.typeBytes[t]!})
    for (let i = 0; i < FLAT_SIZES; i++) if (this.sizeObjects[i]! > 0) all.push({type: 0, size: i * 8, objects: this.sizeObjects[i]!, bytes: this.sizeObjects[i]! * i * 8})
    for (const [size, n] of this.bigSizes) all.push({type: 0, size, objects: n, bytes: n * size})
    all.sort((a, b) => b.bytes - a.bytes || b.type - a.type || a.size - b.size)
    return all.slice(0, k)
  }
}
