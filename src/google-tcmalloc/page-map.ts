import type {AddressSpace} from '../core/address-space.js'
import {u64le} from '../util/u64le.js'
import type {GoogleLayout} from './layout.js'

/** Bits of a user-space address on x86-64 and on aarch64 Linux alike (tcmalloc's kAddressBits, config.h). */
const ADDRESS_BITS = 48
/** Bits 48-63 of a packed leaf entry hold the size class (PackedSpanAndSizeclass, da43087). */
const SPAN_MASK = 2 ** 48

/** One page whose leaf entry names a span record, with the size class its leaf keeps for it. */
export interface PageEntry {
  page: number
  record: number
  sizeClass: number
}

/**
 * The page map's geometry for a page shift: PageMap2 (root array of leaves, 15 leaf bits) or
 * PageMap3 (root, mid and leaf each a third of the bits, rounded up), as pagemap.h computes it.
 * A leaf is {CompactSizeClass sizeclass[N]; Span* (or packed) span[N]; void* hugepage[...]}.
 */
export function pageMapGeometry(layout: GoogleLayout, pageShift: number, classBytes: 1 | 2) {
  const bits = ADDRESS_BITS - pageShift
  if (layout.pageMap.levels === 3) {
    const leafBits = Math.ceil(bits / 3)
    const midBits = leafBits
    const rootBits = bits - leafBits - midBits
    const leafLength = 2 ** leafBits
    return {bits, leafBits, midBits, rootBits, leafLength, spansAt: alignUp(leafLength * classBytes, 8)}
  }
  const leafBits = layout.pageMap.leafBits ?? 15
  const leafLength = 2 ** leafBits
  return {bits, leafBits, midBits: 0, rootBits: bits - leafBits, leafLength, spansAt: alignUp(leafLength * classBytes, 8)}
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a

/** Where the walk stops and says so: more leaves than 2^leafBits' worth of a 48-bit space cannot exist. */
export interface PageMapWalk {
  entries: PageEntry[]
  leaves: number[]
  nodes: number[]
  /** Leaf or node pointers that were not readable in the core. */
  unreadable: number[]
}

/**
 * Every page of the map whose entry is set, in page order: the leaf's span pointer (its top 16
 * bits masked off where the family packs them) and the size class from the leaf's own
 * sizeclass[] array (0 once the span is unregistered). Reads each leaf's two arrays once; a
 * pointer to unreadable memory is reported, not followed.
 */
export function walkPageMap(memory: AddressSpace, pageMap: number, layout: GoogleLayout, pageShift: number, classBytes: 1 | 2, limit = Infinity): PageMapWalk {
  const g = pageMapGeometry(layout, pageShift, classBytes)
  const out: PageMapWalk = {entries: [], leaves: [], nodes: [], unreadable: []}
  const rootLength = 2 ** g.rootBits
  const root = memory.readBytes(pageMap, rootLength * 8)
  if (!root) {
    out.unreadable.push(pageMap)
    return out
  }
  const readLeaf = (leaf: number, firstPage: number) => {
    const spans = memory.readBytes(leaf + g.spansAt, g.leafLength * 8)
    const classes = memory.readBytes(leaf, g.leafLength * classBytes)
    if (!spans || !classes) {
      out.unreadable.push(leaf)
      return
    }
    out.leaves.push(leaf)
    for (let i = 0; i < g.leafLength && out.entries.length < limit; i++) {
      const lo = spans.readUInt32LE(i * 8)
      const hi = spans.readUInt32LE(i * 8 + 4)
      if (lo === 0 && (hi & 0xffff) === 0) continue
      // Packed entries keep the class in bits 48-63: the span pointer is the low 48 bits.
      const record = layout.pageMap.packed ? lo + (hi & 0xffff) * 0x1_0000_0000 : u64le(spans, i * 8)
      if (record === 0) continue
      const sizeClass = classBytes === 2 ? classes.readUInt16LE(i * 2) : classes[i]!
      out.entries.push({page: firstPage + i, record, sizeClass})
    }
  }
  for (let r = 0; r < rootLength && out.entries.length < limit; r++) {
    const child = u64le(root, r * 8)
    if (child === 0) continue
    if (child >= SPAN_MASK) {
      out.unreadable.push(pageMap + r * 8)
      continue
    }
    if (layout.pageMap.levels === 2) {
      readLeaf(child, r * g.leafLength)
      continue
    }
    const midLength = 2 ** g.midBits
    const node = memory.readBytes(child, midLength * 8)
    if (!node) {
      out.unreadable.push(child)
      continue
    }
    out.nodes.push(child)
    for (let m = 0; m < midLength && out.entries.length < limit; m++) {
      const leaf = u64le(node, m * 8)
      if (leaf === 0) continue
      if (leaf >= SPAN_MASK) {
        out.unreadable.push(child + m * 8)
        continue
      }
      readLeaf(leaf, (r * midLength + m) * g.leafLength)
    }
  }
  return out
}

/** Bytes of one leaf and one interior node (metadata the roots must not scan). */
export function pageMapNodeBytes(layout: GoogleLayout, pageShift: number, classBytes: 1 | 2): {leaf: number; node: number; leafCovers: number} {
  const g = pageMapGeometry(layout, pageShift, classBytes)
  const hugepages = Math.max(1, 2 ** (g.leafBits + pageShift - 21))
  return {leaf: g.spansAt + g.leafLength * 8 + hugepages * 8, node: 2 ** g.midBits * 8, leafCovers: g.leafLength}
}
