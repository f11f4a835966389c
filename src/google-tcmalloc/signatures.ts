import {USER_SPACE_END, type AddressSpace, type Segment} from '../core/address-space.js'
import {u64le} from '../util/u64le.js'
import {classBytesOf, type GoogleLayout, type ShiftLayout} from './layout.js'
import {GOOGLE_TCMALLOC_LAYOUTS} from './layouts.js'
import {pageMapGeometry} from './page-map.js'
import {readSpanRecord, type GoogleSpanTable} from './spans.js'

/**
 * Finding google/tcmalloc's globals in a module's data when its symbols are gone (a stripped
 * static link, or the core alone). Each is recognised by what it must hold, checked against the
 * rest of the heap, never by a guess at its place:
 * - the page map: a root entry leads to a node, a leaf and a span record whose first page is the
 *   very page the path through the map spells;
 * - the size map: class_to_size_ starts 0, 8, 16 and every class has its pages;
 * - the transfer caches: one per class at the family's stride, each with the manager as its owner_;
 * - the per-CPU slab: slabs pointer and shift, CPU states, begins_;
 * - ThreadCache::thread_heaps_: a cache whose lists start at free objects of their classes;
 * - the page allocator: its normal_impl_[0] points at its own start (where its first
 *   HugePageAwareAllocator is kept), and sampled_impl_[0] inside it.
 */

/** A module's data segments read once: the scans below go word by word through them. */
export interface DataWords {
  segments: Array<{start: number; bytes: Buffer}>
}

/**
 * Bytes of module data read for the scans, per segment and in all: past these nothing is searched.
 * tcmalloc's statics in a static link run to about 20 MiB; a core whose headers claim far more
 * cannot make the scans hold more than this.
 */
const MAX_SEGMENT = 256 * 2 ** 20
const MAX_TOTAL = 512 * 2 ** 20

export function readDataWords(memory: AddressSpace, segments: Segment[]): DataWords {
  const out: DataWords = {segments: []}
  let total = 0
  for (const s of segments) {
    const length = Math.min(s.end - s.start, MAX_SEGMENT, MAX_TOTAL - total)
    if (length <= 0) break
    const bytes = memory.readBytes(s.start, length)
    if (bytes) out.segments.push({start: s.start, bytes})
    total += length
  }
  return out
}

const plausiblePointer = (w: number) => w >= 0x10000 && w < USER_SPACE_END && w % 8 === 0

export interface PageMapMatch {
  pageMap: number
  layout: GoogleLayout
  pageShift: number
}

/**
 * The page map: every word that may point to a page-map node (PageMap3) or leaf (PageMap2) is
 * followed to its first leaf entries and their span records; a record's first page says at which
 * root index the word must sit, so where the root array starts. Most words of a program's data
 * point at anything but a leaf, so a leaf is looked at only as far as its first entries (a real
 * leaf holds nothing but span pointers there), and what a leaf holds is read once per geometry,
 * not once per family. The first match `accept` takes is returned.
 */
export function findPageMap(memory: AddressSpace, data: DataWords, inModule: (addr: number) => boolean, accept: (match: PageMapMatch) => boolean = () => true): PageMapMatch | null {
  const tried = new Set<number>()
  const candidates = GOOGLE_TCMALLOC_LAYOUTS.flatMap(layout => Object.entries(layout.shifts).map(([key, shift]) => ({layout, pageShift: Number(key), shift})))
  for (const seg of data.segments) {
    for (let off = 0; off + 8 <= seg.bytes.length; off += 8) {
      const w = u64le(seg.bytes, off)
      if (!plausiblePointer(w) || tried.has(w) || inModule(w)) continue
      tried.add(w)
      const leaves = new LeafEntries(memory)
      for (const {layout, pageShift, shift} of candidates) {
        const root = rootIndexOf(memory, w, layout, pageShift, shift, leaves)
        if (root === null) continue
        const base = seg.start + off - root * 8
        // The root may start in an earlier segment than this entry: the kernel maps a large .bss
        // in pieces, and an 8 MiB root's first entries in use can lie pieces after its start.
        if (!data.segments.some(d => base >= d.start && base < d.start + d.bytes.length) || !wholeRootAgrees(memory, base, layout, pageShift, shift)) continue
        // One geometry can read another's root: PageMap2's leaves are 2^15 entries with 8 and
        // with 256 KiB pages, so the aligned 2^15-entry window of an 8 KiB build's root agrees
        // with itself under 256 KiB pages (first_page_ cut to 30 bits keeps the index modulo
        // 2^15). The caller's check (the size map of that page size) tells them apart.
        const match = {pageMap: base, layout, pageShift}
        if (accept(match)) return match
      }
    }
  }
  return null
}

/** Non-zero entries of a leaf that are looked at: a real leaf's first ones lead to a span that names its own page. */
const ENTRIES_LOOKED_AT = 64
/** A leaf's span array is read this many bytes at a time, as far as its first non-zero entries. */
const LEAF_CHUNK = 4096

/** The first non-zero entries {index, raw word} of a leaf's span array, read once per leaf address and geometry. */
class LeafEntries {
  private readonly cache = new Map<string, Array<{k: number; lo: number; hi: number}> | null>()
  constructor(private readonly memory: AddressSpace) {}

  of(leaf: number, spansAt: number, leafLength: number): Array<{k: number; lo: number; hi: number}> | null {
    const key = `${leaf}/${spansAt}/${leafLength}`
    let found = this.cache.get(key)
    if (found !== undefined) return found
    found = []
    for (let k0 = 0; k0 < leafLength && found.length < ENTRIES_LOOKED_AT; k0 += LEAF_CHUNK / 8) {
      const n = Math.min(LEAF_CHUNK / 8, leafLength - k0)
      const chunk = this.memory.readBytes(leaf + spansAt + k0 * 8, n * 8)
      if (!chunk) {
        found = null
        break
      }
      for (let i = 0; i < n && found.length < ENTRIES_LOOKED_AT; i++) {
        const lo = chunk.readUInt32LE(i * 8)
        const hi = chunk.readUInt32LE(i * 8 + 4)
        if (lo !== 0 || hi !== 0) found.push({k: k0 + i, lo, hi})
      }
    }
    this.cache.set(key, found)
    return found
  }
}

/** Every entry of the root array at base is empty, or leads to spans whose pages put it at its own index. */
function wholeRootAgrees(memory: AddressSpace, base: number, layout: GoogleLayout, pageShift: number, shift: ShiftLayout): boolean {
  const g = pageMapGeometry(layout, pageShift, classBytesOf(shift))
  const root = memory.readBytes(base, 2 ** g.rootBits * 8)
  if (!root) return false
  const leaves = new LeafEntries(memory)
  let agreeing = 0
  for (let r = 0; r < 2 ** g.rootBits; r++) {
    const child = u64le(root, r * 8)
    if (child === 0) continue
    if (!plausiblePointer(child)) return false
    const at = rootIndexOf(memory, child, layout, pageShift, shift, leaves)
    if (at !== null && at !== r) return false
    if (at === r) agreeing++
  }
  return agreeing > 0
}

/**
 * The root index at which `child` (a node or leaf) must sit, from the first span it leads to;
 * null when it leads to none. Each of the leaf's first non-zero entries must be a span pointer
 * (else this is no leaf); the first whose record names its own page decides.
 */
function rootIndexOf(memory: AddressSpace, child: number, layout: GoogleLayout, pageShift: number, shift: ShiftLayout, leaves: LeafEntries): number | null {
  const g = pageMapGeometry(layout, pageShift, classBytesOf(shift))
  let leaf = child
  let mid = 0
  if (layout.pageMap.levels === 3) {
    const node = memory.readBytes(child, 2 ** g.midBits * 8)
    if (!node) return null
    mid = -1
    for (let m = 0; m < 2 ** g.midBits; m++) {
      const v = u64le(node, m * 8)
      if (v === 0) continue
      if (!plausiblePointer(v)) return null
      mid = m
      leaf = v
      break
    }
    if (mid < 0) return null
  }
  const entries = leaves.of(leaf, g.spansAt, g.leafLength)
  if (!entries) return null
  for (const {k, lo, hi} of entries) {
    const record = lo + (layout.pageMap.packed ? hi & 0xffff : hi) * 0x1_0000_0000
    if (!plausiblePointer(record)) return null
    const r = readSpanRecord(memory, record, layout, pageShift)
    if (!r) continue
    const page = r.firstPage
    if (page % g.leafLength !== k) continue
    const upper = Math.floor(page / g.leafLength)
    if (layout.pageMap.levels === 3 && upper % 2 ** g.midBits !== mid) continue
    return layout.pageMap.levels === 3 ? Math.floor(upper / 2 ** g.midBits) : upper
  }
  return null
}

/** SizeMap: class_to_size_ begins 0, 8, 16, every size is a multiple of 8 up to 256 KiB, and each class has its pages. */
export function findSizeMap(data: DataWords, shift: ShiftLayout): number | null {
  for (const seg of data.segments) {
    const b = seg.bytes
    for (let off = shift.classToSize; off + shift.numClasses * 4 <= b.length; off += 4) {
      if (b.readUInt32LE(off) !== 0 || b.readUInt32LE(off + 4) !== 8 || b.readUInt32LE(off + 8) !== 16) continue
      const base = off - shift.classToSize
      const pagesAt = base + shift.classToPages
      if (pagesAt < 0 || pagesAt + shift.numClasses > b.length) continue
      let ok = true
      for (let c = 1; c < shift.numClasses && ok; c++) {
        const size = b.readUInt32LE(off + c * 4)
        const pages = b[pagesAt + c]!
        ok = size % 8 === 0 && size <= 256 * 1024 && (size === 0 ? pages === 0 : pages >= 1 && pages <= 64)
      }
      if (ok) return seg.start + base
    }
  }
  return null
}

/** TransferCacheManager: each class's cache names the manager as its owner_, with used ≤ capacity and slots_ set wherever capacity is. */
export function findTransferCache(memory: AddressSpace, data: DataWords, layout: GoogleLayout, shift: ShiftLayout): number | null {
  const L = layout.transferCache
  const span = shift.numClasses * L.stride
  for (const seg of data.segments) {
    const b = seg.bytes
    for (let off = 0; off + span <= b.length; off += 8) {
      const self = seg.start + off
      if (u64le(b, off + L.stride + L.owner) !== self) continue
      let withSlots = 0
      let ok = true
      for (let c = 1; c < shift.numClasses && ok; c++) {
        const at = off + c * L.stride
        if (u64le(b, at + L.owner) !== self) ok = false
        const used = b.readInt32LE(at + L.slotInfo)
        const capacity = b.readInt32LE(at + L.slotInfo + 4)
        const slots = u64le(b, at + L.slots)
        ok = used >= 0 && used <= capacity && capacity <= 1 << 16 && (slots === 0 ? capacity === 0 : plausiblePointer(slots))
        if (ok && slots !== 0) withSlots++
      }
      if (ok && withSlots > 0) return self
    }
  }
  return null
}

/** Shards a sharded transfer cache may have (one per L3 cache): more is not one. */
const MAX_SHARDS = 1024

/**
 * Static::sharded_transfer_cache_: shards_, a pointer to num_shards_ (1..1024) Shards, each with
 * its initialized flag a 0 or a 1 and, where 1, a pointer to a transfer cache per class whose
 * slot_info_ is {used ≤ capacity ≤ 65536} with slots wherever it has capacity; at least one shard
 * initialized with an object in some cache. Null where the layout does not place it, or none is
 * in use (then it holds nothing to find).
 */
export function findShardedTransferCache(memory: AddressSpace, data: DataWords, layout: GoogleLayout, shift: ShiftLayout): number | null {
  const L = layout.shardedTransferCache
  if (!L) return null
  for (const seg of data.segments) {
    const b = seg.bytes
    for (let off = 0; off + Math.max(L.shards, L.numShards) + 8 <= b.length; off += 8) {
      const count = b.readInt32LE(off + L.numShards)
      if (count < 1 || count > MAX_SHARDS) continue
      const shards = u64le(b, off + L.shards)
      if (!plausiblePointer(shards)) continue
      const array = memory.readBytes(shards, count * L.shardStride)
      if (!array) continue
      let held = 0
      let ok = true
      for (let s = 0; s < count && ok; s++) {
        const initialized = array[s * L.shardStride + L.shardInitialized]!
        if (initialized > 1) ok = false
        if (initialized !== 1) continue
        const caches = u64le(array, s * L.shardStride + L.shardCaches)
        const all = plausiblePointer(caches) ? memory.readBytes(caches, shift.numClasses * L.cacheStride) : undefined
        if (!all) ok = false
        for (let c = 1; ok && all && c < shift.numClasses; c++) {
          const at = c * L.cacheStride
          const used = all.readInt32LE(at + L.slotInfo)
          const capacity = all.readInt32LE(at + L.slotInfo + 4)
          const slots = u64le(all, at + L.slots)
          ok = used >= 0 && used <= capacity && capacity <= 1 << 16 && (capacity === 0 || plausiblePointer(slots))
          held += ok ? used : 0
        }
      }
      if (ok && held > 0) return seg.start + off
    }
  }
  return null
}

/** The per-CPU TcmallocSlab: slabs pointer | shift (12..24), CPU states {ptr, count 1..4096}, begins_. Returns Static::cpu_cache_. */
export function findCpuCache(memory: AddressSpace, data: DataWords, layout: GoogleLayout, shift: ShiftLayout): number | null {
  const L = layout.slab
  for (const seg of data.segments) {
    const b = seg.bytes
    for (let off = 0; off + 32 <= b.length; off += 8) {
      const raw = u64le(b, off + L.slabsAndShift)
      const bits = raw % 256
      if (bits < 12 || bits > 24 || !plausiblePointer(raw - bits)) continue
      if (L.cpuCount !== undefined) {
        const cpus = u64le(b, off + L.cpuCount)
        const states = u64le(b, off + L.cpuCount - 8)
        if (cpus < 1 || cpus > 4096 || !plausiblePointer(states)) continue
      }
      if (L.begins !== undefined) {
        const begins = u64le(b, off + L.begins)
        if (!plausiblePointer(begins - (begins % 8)) || !memory.isReadable(begins, 4)) continue
      }
      const headers = memory.readBytes(raw - bits, L.headerBytes * shift.numClasses)
      if (!headers) continue
      // Headers that carry their begin: CPU 0's must all be unset, locked or in order, some set.
      if (L.headerBegin !== undefined && !ownBeginsInOrder(headers, L.headerBytes, L.headerBegin, L.headerEnd, shift.numClasses, bits)) continue
      const at = seg.start + off - shift.slabInCpuCache
      if (at >= seg.start) return at
    }
  }
  return null
}

function ownBeginsInOrder(headers: Buffer, bytes: number, beginAt: number, endAt: number, numClasses: number, bits: number): boolean {
  let set = 0
  for (let c = 1; c < numClasses; c++) {
    const current = headers.readUInt16LE(c * bytes)
    const begin = headers.readUInt16LE(c * bytes + beginAt)
    const end = headers.readUInt16LE(c * bytes + endAt)
    if (begin === 0xffff || (current === 0 && begin === 0 && end === 0)) continue
    if (begin === 0 || current < begin || current > end || end * 8 > 2 ** bits) return false
    set++
  }
  return set > 0
}

/**
 * ThreadCache::thread_heaps_: a word pointing to a cache (outside the heap's spans) each of whose
 * non-empty lists starts at a free-looking object of its own class, with at least one such list.
 */
export function findThreadHeaps(memory: AddressSpace, data: DataWords, spans: GoogleSpanTable, layout: GoogleLayout, shift: ShiftLayout, inHeap: (addr: number) => number): number | null {
  const L = layout.threadCache
  const tried = new Set<number>()
  for (const seg of data.segments) {
    for (let off = 0; off + 8 <= seg.bytes.length; off += 8) {
      const w = u64le(seg.bytes, off)
      if (!plausiblePointer(w) || tried.has(w) || inHeap(w) >= 0) continue
      tried.add(w)
      const lists = memory.readBytes(w + shift.threadCacheList, shift.numClasses * L.freeListStride)
      if (!lists) continue
      let heads = 0
      let ok = true
      for (let c = 1; c < shift.numClasses && ok; c++) {
        const head = u64le(lists, c * L.freeListStride + L.freeListHead)
        if (head === 0) continue
        const s = inHeap(head)
        ok = s >= 0 && spans.tcmallocClass[s] === c && (head - spans.start[s]!) % spans.objectSize[s]! === 0
        heads++
      }
      if (ok && heads > 0) return seg.start + off
    }
  }
  return null
}

/** The page allocator (Static::page_allocator_): normal_impl_[0] is its own address (choices_[0] holds that instance), sampled_impl_[0] lies within it. */
export function findPageAllocator(data: DataWords, shift: ShiftLayout): number | null {
  const B = shift.backEnd
  if (!B) return null
  for (const seg of data.segments) {
    const b = seg.bytes
    for (let off = 0; off + B.hasColdImpl + 1 <= b.length; off += 8) {
      const self = seg.start + off
      if (u64le(b, off + B.normalImpl) !== self) continue
      const sampled = u64le(b, off + B.sampledImpl)
      if (sampled > self && sampled < self + B.normalImpl) return self
    }
  }
  return null
}
