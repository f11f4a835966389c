import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {GrowableF64} from '../util/growable.js'
import type {Layout} from './layout.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'

/** Every non-empty page-map entry, in ascending page order: page number and the Span pointer it holds. */
export interface PageMapEntries {
  count: number
  page: Float64Array
  span: Float64Array
}

/**
 * Reads every non-empty page-map entry, skipping empty subtrees but no populated entry: what a
 * span's length claims is checked against these entries (spans.ts), never used to jump over them.
 * Each node is read once and must not overlap another node of its level (a damaged pointer to an
 * already visited node would repeat its entries), so the entries kept are bounded by the core's
 * own bytes, not by any number read from it.
 */
export function readPageMap(
  memory: AddressSpace,
  pageHeap: number,
  layout: Layout,
  warnings: Warnings,
  progress?: (page: number) => void,
): PageMapEntries {
  const pm = layout.pageMap
  const at = pageHeap + layout.pageHeap.pagemap
  const pages = new GrowableF64()
  const spans = new GrowableF64()
  let levels: number[]
  let root: number
  if (pm.kind === 2) {
    levels = [pm.rootBits, pm.leafBits]
    root = at // the root array is embedded in the PageHeap
  } else {
    levels = [pm.interiorBits, pm.interiorBits, pm.leafBits]
    const p = memory.readU64(at)
    if (!p) {
      warnings.add('pagemap', `page map root pointer at ${hex(at)} is null or not in the core`, at)
      return {count: 0, page: new Float64Array(0), span: new Float64Array(0)}
    }
    root = p
  }
  const seen = levels.map(() => new Map<number, number>())
  const walk = (node: number, level: number, prefix: number, from: number): void => {
    const bits = levels[level]!
    const entries = 2 ** bits
    const bytes = entries * 8
    if (!claimNode(seen[level]!, node, bytes)) {
      warnings.add('pagemap', `page map node at ${hex(node)} (level ${level}, referenced from ${hex(from)}) overlaps another node of its level`, node, from)
      return
    }
    const buf = memory.readBytes(node, bytes)
    if (!buf) {
      warnings.add('pagemap', `page map node at ${hex(node)} (level ${level}) is not in the core (${memory.whyUnreadable(node, bytes)})`, node, from)
      return
    }
    let below = 0
    for (let l = level + 1; l < levels.length; l++) below += levels[l]!
    const span = 2 ** below
    const leaf = level === levels.length - 1
    for (let i = 0; i < entries; i++) {
      const v = u64le(buf, i * 8)
      if (v === 0) continue
      const first = (prefix * entries + i) * span
      if (leaf) {
        pages.push(first)
        spans.push(v)
        if ((pages.length & 0xffff) === 0) progress?.(first)
      } else {
        walk(v, level + 1, prefix * entries + i, node + i * 8)
      }
    }
  }
  walk(root, 0, 0, at)
  return {count: pages.length, page: pages.toArray(), span: spans.toArray()}
}

/** Records a node of `bytes` at addr; false when it overlaps one already recorded (one per bucket of its size). */
function claimNode(seen: Map<number, number>, addr: number, bytes: number): boolean {
  const bucket = Math.floor(addr / bytes)
  for (const b of [bucket - 1, bucket, bucket + 1]) {
    const other = seen.get(b)
    if (other !== undefined && Math.abs(other - addr) < bytes) return false
  }
  seen.set(bucket, addr)
  return true
}
