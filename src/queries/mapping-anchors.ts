import {regionOf, type RootRegion} from '../graph/root-regions.js'
import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {u64le} from '../util/u64le.js'
import {rootRefLabel} from './root-label.js'
import {liveBlockWordsIn} from './live-block-words.js'
import {executableTlsVariable} from '../program/tls-variable.js'

/** A word in a global, a thread's stack or TLS, or a live heap block that points into a mapping: what keeps the mapping meaningful to the program. */
export interface MappingAnchor {
  /** Where the pointer lies. */
  address: number
  /** `conn_arena+0x0 (slabcache)`, `thread 12 #2 worker_main …`, `TLS of 12 at fs_base -0x8`: the root's label; `block 0x…+0x18 (32 B, unnamed)`: a live heap block's. */
  label: string
  /** The pointer's target, from the range's start. */
  pointsAt: number
}

/** `conn_arena+0x0 (slabcache), pointing at +0x0`. */
export const anchorText = (a: MappingAnchor) => `${a.label}, pointing at +${hex(a.pointsAt)}`

/** Root regions whose words may anchor a mapping: what the program keeps in its globals, stacks and threads' TLS. */
const ANCHOR_REGIONS: ReadonlySet<string> = new Set(['global', 'stack', 'tls'])

/**
 * The globals, stack slots, TLS words and live heap blocks' words that point into each range
 * [start, end): every scanned root region of those kinds (index.meta.rootRegions) read word by
 * word, then (`heapBlocks`) every live block of the heap, once for all ranges, until every range
 * has its anchors; at most `cap` anchors a range, the roots first. Only words the core holds count: a range nothing points to gets none. A target
 * `skip` says is something else's (a heap object in a mapping that also holds spans) is no anchor.
 */
export function mappingAnchors(program: Program, index: HeapIndex, ranges: ReadonlyArray<{start: number; end: number}>, cap: number, options: {skip?: (target: number) => boolean; heapBlocks: boolean}): MappingAnchor[][] {
  const {skip} = options
  const found: MappingAnchor[][] = ranges.map(() => [])
  if (!ranges.length) return found
  const regions: RootRegion[] = index.meta.rootRegions ?? []
  const order = ranges.map((r, i) => ({...r, i})).sort((a, b) => a.start - b.start)
  const lo = order[0]!.start
  const hi = order.reduce((m, r) => Math.max(m, r.end), 0)
  const memory = program.core.memory
  let full = 0
  /** Takes the word at `address` (read as `v`) when it points into a range that still wants anchors; `label` names it. */
  const take = (v: number, address: number, label: () => string) => {
    if (v < lo || v >= hi) return
    const r = regionOf(order, v)
    if (!r || found[r.i]!.length >= cap || skip?.(v)) return
    found[r.i]!.push({address, label: label(), pointsAt: v - r.start})
    if (found[r.i]!.length === cap) full++
  }
  for (const region of regions) {
    if (!ANCHOR_REGIONS.has(region.kind)) continue
    const bytes = memory.readBytes(region.start, region.end - region.start)
    if (!bytes) continue
    for (let at = 0; at + 8 <= bytes.length; at += 8) {
      const address = region.start + at
      // A TLS word by its variable where that is proven (the executable's), as a global by its symbol.
      const label = () => (region.kind === 'tls' ? executableTlsVariable(program, region.base, address) : undefined) ?? rootRefLabel(program, index, {kind: region.kind, thread: region.thread, address, to: -1, toOffset: 0})
      take(u64le(bytes, at), address, label)
    }
  }
  // Live heap blocks in address order, until every range has its anchors.
  if (options.heapBlocks && full < ranges.length) {
    liveBlockWordsIn(index, memory, lo, hi, (v, address, id, block, size) => {
      take(v, address, () => `block ${hex(block)}+${hex(address - block)} (${index.type(id) ?? `${size} B, unnamed`})`)
      return full === ranges.length
    })
  }
  return found
}
