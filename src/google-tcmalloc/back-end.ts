import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'
import {classBytesOf, type GoogleLayout, type ShiftLayout} from './layout.js'
import {pageMapGeometry, type PageMapWalk} from './page-map.js'

/** Where the back end keeps a run of free pages (HugePageAwareAllocator's parts, as its stats name them). */
export type BackEndPart = 'filler' | 'region' | 'cache' | 'alloc'

/** A run of free pages of the back end: backed (page-heap free) or given back to the system, and the part that keeps it. */
export interface FreeRange {
  start: number
  bytes: number
  returned: boolean
  part: BackEndPart
}

/** One hugepage of the filler, as its PageTracker says: pages in use, free pages given back to the system, the longest run of free pages. */
export interface FillerHugePage {
  start: number
  used: number
  released: number
  longestFree: number
}

export const HUGE_PAGE = 2 ** 21
/** HugeAddressMap is a treap: deeper than this, or more nodes, is a cycle or damage. */
const MAX_NODES = 1 << 20

/**
 * The free pages of the huge-page-aware back end, as its stats count them (HugePageAwareAllocator
 * ::stats: filler, regions, cache, allocator), for every instance the page allocator has (the
 * normal partitions, the sampled one, the cold one):
 * - the filler: each hugepage it manages has a PageTracker, which the page map's leaf points to
 *   (hugepage[]); pages not set in its RangeTracker bitmap are free, released where
 *   released_by_page_ says so;
 * - the huge cache: whole free hugepages, backed (HugeCache::cache_, a HugeAddressMap treap);
 * - the huge allocator: hugepages returned to the system (HugeAllocator::free_).
 * - the regions (HugeRegionSet, 1 GiB slabs for large blocks in big heaps): pages not set in a
 *   region's bitmap are free, returned where their hugepage is not backed (backed_[]); where the
 *   layout does not place them, a warning says their free pages are not counted.
 */
export function readFreePages(
  memory: AddressSpace,
  walk: PageMapWalk,
  layout: GoogleLayout,
  pageShift: number,
  shift: ShiftLayout,
  pageAllocator: number | null,
  warnings: Warnings,
): {ranges: FreeRange[]; filler: FillerHugePage[]; hugeCache: {walked: number; counted: number} | null} | null {
  const B = shift.backEnd
  if (!B) return null
  const pageSize = 2 ** pageShift
  const pagesPerHuge = HUGE_PAGE / pageSize
  const out: FreeRange[] = []
  const filler: FillerHugePage[] = []
  const g = pageMapGeometry(layout, pageShift, classBytesOf(shift))
  const hugepagesPerLeaf = Math.max(1, 2 ** (g.leafBits + pageShift - 21))
  const seen = new Set<number>()
  for (const leaf of walk.leaves) {
    const trackers = memory.readBytes(leaf + g.spansAt + g.leafLength * 8, hugepagesPerLeaf * 8)
    if (!trackers) continue
    for (let i = 0; i < hugepagesPerLeaf; i++) {
      const t = u64le(trackers, i * 8)
      if (t === 0 || seen.has(t)) continue
      seen.add(t)
      const rec = memory.readBytes(t, B.trackerSize)
      if (!rec) {
        warnings.add('back-end', `page tracker ${hex(t)} is not in the core: its hugepage's free pages are not counted`, t)
        continue
      }
      const start = u64le(rec, B.trackerLocation) * HUGE_PAGE
      if (start % HUGE_PAGE !== 0 || start >= 2 ** 48) {
        warnings.addDamage('back-end', `page tracker ${hex(t)} names hugepage ${hex(start)}: left out`, t)
        continue
      }
      const bit = (at: number, p: number) => (rec[at + Math.floor(p / 8)]! >> (p % 8)) & 1
      const free = (p: number) => bit(B.trackerUsed, p) === 0
      const released = (p: number) => bit(B.trackerReleased, p) === 1
      pushFreeRuns(out, start, pagesPerHuge, pageSize, free, released, 'filler')
      filler.push(fillerHugePage(start, pagesPerHuge, free, released))
    }
  }
  filler.sort((a, b) => a.start - b.start)
  if (pageAllocator === null) {
    warnings.add('back-end', 'Static::page_allocator_ not found: free hugepages in the huge cache and the huge allocator are not counted')
    return {ranges: out, filler, hugeCache: null}
  }
  // The huge cache's hugepages as walked, and as each cache's own size_ counts them.
  const hugeCache = {walked: 0, counted: 0}
  for (const hpaa of allocatorInstances(memory, pageAllocator, B)) {
    const regions = memory.readU64(hpaa + B.regionsCount) ?? 0
    if (regions > 0 && !B.regions) warnings.add('back-end', `huge-page-aware allocator ${hex(hpaa)} has ${regions} region(s): their free pages are not walked, nor counted (this layout does not say where they are)`, hpaa)
    else if (regions > 0) out.push(...regionFreePages(memory, hpaa, regions, B.regions!, pageSize, warnings))
    const lifetimeRegions = B.lifetimeRegionsCount === undefined ? 0 : (memory.readU64(hpaa + B.lifetimeRegionsCount) ?? 0)
    if (lifetimeRegions > 0) warnings.add('back-end', `huge-page-aware allocator ${hex(hpaa)}'s lifetime-based allocator holds ${lifetimeRegions} region(s): their free pages are not walked, nor counted`, hpaa)
    hugeCache.counted += (memory.readU64(hpaa + B.cacheHugePages) ?? 0) * HUGE_PAGE
    for (const [root, returned] of [
      [hpaa + B.cacheRoot, false],
      [hpaa + B.allocatorFreeRoot, true],
    ] as const) {
      for (const r of addressMapRanges(memory, root, B, warnings)) {
        out.push({start: r.first * HUGE_PAGE, bytes: r.count * HUGE_PAGE, returned, part: returned ? 'alloc' : 'cache'})
        if (!returned) hugeCache.walked += r.count * HUGE_PAGE
      }
    }
  }
  return {ranges: out.sort((a, b) => a.start - b.start), filler, hugeCache}
}

/** A filler hugepage's pages in use, free pages released, and its longest run of free pages. */
function fillerHugePage(start: number, pages: number, free: (p: number) => boolean, released: (p: number) => boolean): FillerHugePage {
  const page: FillerHugePage = {start, used: 0, released: 0, longestFree: 0}
  let run = 0
  for (let p = 0; p < pages; p++) {
    if (!free(p)) {
      page.used++
      run = 0
      continue
    }
    if (released(p)) page.released++
    page.longestFree = Math.max(page.longestFree, ++run)
  }
  return page
}

/** The runs of free pages among `pages` pages from `start`, each backed or returned throughout. */
function pushFreeRuns(out: FreeRange[], start: number, pages: number, pageSize: number, free: (p: number) => boolean, returned: (p: number) => boolean, part: BackEndPart): void {
  let run = -1
  let runReturned = false
  const close = (end: number) => {
    if (run >= 0) out.push({start: start + run * pageSize, bytes: (end - run) * pageSize, returned: runReturned, part})
    run = -1
  }
  for (let p = 0; p < pages; p++) {
    const isFree = free(p)
    const isReturned = isFree && returned(p)
    if (!isFree || (run >= 0 && isReturned !== runReturned)) close(p)
    if (isFree && run < 0) {
      run = p
      runReturned = isReturned
    }
  }
  close(pages)
}

/** Regions a HugeRegionSet may hold: each is 1 GiB of address space, so more than this is damage. */
const MAX_REGIONS = 1 << 16

/**
 * The free pages of an allocator's regions: its list of HugeRegions walked from the head, as many
 * as its count says (a list that does not come back to its head within them is damage), each
 * region's pages not set in its bitmap, returned where their hugepage is not backed.
 */
function regionFreePages(
  memory: AddressSpace,
  hpaa: number,
  count: number,
  R: NonNullable<NonNullable<ShiftLayout['backEnd']>['regions']>,
  pageSize: number,
  warnings: Warnings,
): FreeRange[] {
  const out: FreeRange[] = []
  const head = hpaa + R.listHead
  const pagesPerHuge = HUGE_PAGE / pageSize
  let region = memory.readU64(head) ?? head
  let walked = 0
  for (; region !== head && walked < Math.min(count, MAX_REGIONS); walked++) {
    const bitmap = memory.readBytes(region + R.bitmap, R.pages / 8)
    const location = memory.readU64(region + R.location)
    const backed = memory.readBytes(region + R.backed, R.pages / pagesPerHuge)
    if (!bitmap || location === undefined || !backed) {
      warnings.add('back-end', `huge region ${hex(region)} is not in the core: its free pages are not counted`, region)
      return out
    }
    const start = location * HUGE_PAGE
    if (start >= 2 ** 48) {
      warnings.addDamage('back-end', `huge region ${hex(region)} names hugepage ${hex(start)}: left out`, region)
      return out
    }
    pushFreeRuns(out, start, R.pages, pageSize, p => ((bitmap[Math.floor(p / 8)]! >> (p % 8)) & 1) === 0, p => backed[Math.floor(p / pagesPerHuge)] === 0, 'region')
    region = memory.readU64(region) ?? head
  }
  if (region !== head || walked !== count) {
    warnings.addDamage('back-end', `huge-page-aware allocator ${hex(hpaa)} counts ${count} region(s), its list holds ${walked}${region !== head ? ' before it stops coming back to its head' : ''}: the free pages of those walked are counted`, hpaa)
  }
  return out
}

/** The page allocator's HugePageAwareAllocator instances: normal_impl_[], sampled_impl_[], selsan_impl_ where set, and cold_impl_ when has_cold_impl_. */
function allocatorInstances(memory: AddressSpace, pageAllocator: number, B: NonNullable<ShiftLayout['backEnd']>): number[] {
  const out = new Set<number>()
  const slots = [...Array.from({length: B.normalImpls}, (_, i) => B.normalImpl + i * 8), ...Array.from({length: B.sampledImpls}, (_, i) => B.sampledImpl + i * 8)]
  if (B.selsanImpl !== undefined) slots.push(B.selsanImpl)
  for (const at of slots) {
    const p = memory.readU64(pageAllocator + at) ?? 0
    if (p !== 0) out.add(p)
  }
  if (memory.readU8(pageAllocator + B.hasColdImpl) === 1) {
    const cold = memory.readU64(pageAllocator + B.coldImpl) ?? 0
    if (cold !== 0) out.add(cold)
  }
  return [...out]
}

/** The ranges of a HugeAddressMap (a treap of {first hugepage, count} nodes), walked without recursion and bounded. */
function addressMapRanges(memory: AddressSpace, rootAt: number, B: NonNullable<ShiftLayout['backEnd']>, warnings: Warnings): Array<{first: number; count: number}> {
  const out: Array<{first: number; count: number}> = []
  const stack = [memory.readU64(rootAt) ?? 0]
  const seen = new Set<number>()
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node === 0) continue
    if (seen.has(node) || seen.size >= MAX_NODES) {
      warnings.addDamage('back-end', `the hugepage map at ${hex(rootAt)} reaches node ${hex(node)} twice: the rest of it is not read`, rootAt, node)
      break
    }
    seen.add(node)
    const rec = memory.readBytes(node, B.nodeSize)
    if (!rec) {
      warnings.add('back-end', `hugepage-map node ${hex(node)} is not in the core: its hugepages are not counted`, node)
      continue
    }
    const first = u64le(rec, B.nodeFirst)
    const count = u64le(rec, B.nodeCount)
    if (count > 0 && count < 2 ** 27 && first < 2 ** 27) out.push({first, count})
    stack.push(u64le(rec, B.nodeLeft), u64le(rec, B.nodeRight))
  }
  return out
}
