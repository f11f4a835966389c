import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Layout} from './layout.js'
import type {Warnings} from './warnings.js'

/**
 * Visits every non-empty page-map entry in ascending page order, skipping empty subtrees. The
 * visitor returns the first page it wants to see next (to skip the rest of a span it accepted).
 */
export function walkPageMap(
  memory: AddressSpace,
  pageHeap: number,
  layout: Layout,
  warnings: Warnings,
  visit: (page: number, span: number) => number,
): void {
  const pm = layout.pageMap
  const at = pageHeap + layout.pageHeap.pagemap
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
      return
    }
    root = p
  }
  let nextPage = 0
  const walk = (node: number, level: number, prefix: number): void => {
    const bits = levels[level]!
    const entries = 2 ** bits
    const buf = memory.readBytes(node, entries * 8)
    if (!buf) {
      warnings.add('pagemap', `page map node at ${hex(node)} (level ${level}) is not in the core (${memory.whyUnreadable(node, entries * 8)})`, node)
      return
    }
    let below = 0
    for (let l = level + 1; l < levels.length; l++) below += levels[l]!
    const span = 2 ** below
    for (let i = 0; i < entries; i++) {
      const lo = buf.readUInt32LE(i * 8)
      const hi = buf.readUInt32LE(i * 8 + 4)
      if (lo === 0 && hi === 0) continue
      const v = lo + hi * 0x1_0000_0000
      const first = (prefix * entries + i) * span
      if (first + span <= nextPage) continue
      if (level === levels.length - 1) {
        if (first >= nextPage) nextPage = Math.max(nextPage, visit(first, v))
      } else {
        walk(v, level + 1, prefix * entries + i)
      }
    }
  }
  walk(root, 0, 0)
}
