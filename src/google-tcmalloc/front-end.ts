import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {ThreadCache} from '../heap/heap-model.js'
import {THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import {u64le} from '../util/u64le.js'
import type {FreeMarker} from './free-marker.js'
import type {GoogleLayout, ShiftLayout} from './layout.js'

/** No machine toma reads has more CPUs than this: a larger count in the core is damage. */
export const MAX_CPUS = 4096
/** A per-thread cache list longer than this is a cycle or damage (kMaxDynamicFreeListLength is 8192). */
const MAX_LIST = 1 << 16
/** Thread caches: far more than any process has threads. */
const MAX_THREAD_CACHES = 1 << 20

/** One cache of free objects in front of the central lists: a CPU's slab or a thread's cache. */
export interface FrontCache extends ThreadCache {
  /** The CPU whose slab it is (per-CPU mode), else null. */
  cpu: number | null
}

/**
 * The per-CPU caches (CpuCache::freelist_, a TcmallocSlab): one region of num_cpus << shift
 * bytes; each CPU's part starts with a header per size class, counted in pointers from the CPU's
 * start: {u16 current, u16 end} with the class's begin in the slab's begins_ array (2024 on), or
 * {current, end_copy, begin, end} (before; Drain locks a header by setting begin 0xffff, end 0).
 * The cached objects are the slots from begin up to current (percpu_tcmalloc.h). Each is marked
 * free in a front-end cache.
 */
export function markPerCpuCaches(memory: AddressSpace, slab: number, layout: GoogleLayout, numClasses: number, classSize: Float64Array, marker: FreeMarker, firstOwner: number): FrontCache[] {
  const L = layout.slab
  const raw = memory.readU64(slab + L.slabsAndShift)
  // Before 2025 the slab keeps no CPU count: its CPUs are read while their slabs are in the core and well-formed.
  const counted = L.cpuCount !== undefined
  const cpus = counted ? memory.readU64(slab + L.cpuCount!) : MAX_CPUS
  const beginsAt = L.begins === undefined ? 0 : memory.readU64(slab + L.begins)
  if (raw === undefined || cpus === undefined || beginsAt === undefined) {
    marker.warnings.add('per-cpu', `the per-CPU cache at ${hex(slab)} is not in the core: objects in it are counted live`, slab)
    return []
  }
  if (raw === 0) return []
  const shift = raw % 256
  const slabs = raw - shift
  if (cpus > MAX_CPUS || shift < 12 || shift > 24) {
    marker.warnings.addDamage('per-cpu', `the per-CPU cache at ${hex(slab)} says ${cpus} CPUs with slabs of 2^${shift} bytes: not read, objects in it are counted live`, slab)
    return []
  }
  const begins = L.begins === undefined ? null : memory.readBytes(beginsAt, numClasses * 2)
  if (L.begins !== undefined && !begins) {
    marker.warnings.add('per-cpu', `the per-CPU cache's begins_ array ${hex(beginsAt)} is not in the core: objects in it are counted live`, beginsAt)
    return []
  }
  const header = (headers: Buffer, cls: number) => {
    const at = cls * L.headerBytes
    const begin = begins ? begins.readUInt16LE(cls * 2) : headers.readUInt16LE(at + L.headerBegin!)
    return {current: headers.readUInt16LE(at), begin, end: headers.readUInt16LE(at + L.headerEnd), locked: !begins && begin === 0xffff}
  }
  const out: FrontCache[] = []
  for (let cpu = 0; cpu < cpus; cpu++) {
    const base = slabs + cpu * 2 ** shift
    const headers = memory.readBytes(base, numClasses * L.headerBytes)
    if (!headers) {
      if (counted) continue
      break
    }
    if (!counted && !wellFormed(headers, numClasses, shift, header)) break
    let objects = 0
    let bytes = 0
    marker.owner = firstOwner + out.length
    for (let cls = 1; cls < numClasses; cls++) {
      const {current, begin, end, locked} = header(headers, cls)
      const at = base + cls * L.headerBytes
      if (locked) {
        marker.warnings.add('per-cpu', `CPU ${cpu}'s slab header for class ${cls} (${hex(at)}) is locked (a drain was under way): its objects are counted live`, at)
        continue
      }
      if (current <= begin) continue
      if (current > end || end * 8 > 2 ** shift) {
        marker.warnings.addDamage('per-cpu', `CPU ${cpu}'s slab header for class ${cls} (${hex(at)}) says current ${current}, begin ${begin}, end ${end}: not read`, at)
        continue
      }
      const slots = memory.readBytes(base + begin * 8, (current - begin) * 8)
      if (!slots) continue
      // One site per list, its slot moved along (mark reads it only while it runs).
      // An object in two slots (freed twice on this CPU): the other slot is the earlier one of the same class.
      const reachedFirst = (addr: number) => {
        for (let j = 0; base + (begin + j) * 8 < site.slot; j++) if (u64le(slots, j * 8) === addr) return base + (begin + j) * 8
        return 0
      }
      const site = {where: `the per-CPU slab of CPU ${cpu}, class ${cls}`, structure: at, slot: 0, entry: 0, behind: 0, reachedFirst}
      for (let i = 0; i < current - begin; i++) {
        site.slot = base + (begin + i) * 8
        if (marker.mark(u64le(slots, i * 8), cls, THREAD_CACHE, site)) {
          objects++
          bytes += classSize[cls]!
        }
      }
    }
    if (objects > 0) out.push({address: base, tid: null, inTls: null, bytes, objects, cpu})
  }
  marker.owner = -1
  return out
}

type SlabHeader = (headers: Buffer, cls: number) => {current: number; begin: number; end: number; locked: boolean}

/** Every class's header of a CPU's slab is unset, locked, or begin ≤ current ≤ end within the slab (a CPU past the last is not). */
function wellFormed(headers: Buffer, numClasses: number, shift: number, header: SlabHeader): boolean {
  for (let cls = 1; cls < numClasses; cls++) {
    const {current, begin, end, locked} = header(headers, cls)
    if ((current === 0 && end === 0) || locked) continue
    if (current < begin || current > end || end * 8 > 2 ** shift) return false
  }
  return true
}

/**
 * The transfer caches (TransferCacheManager::cache_[class].tc): slots_[0, slot_info_.used) are
 * free objects of the class, between the front-end caches and the central free lists.
 */
export function markTransferCaches(memory: AddressSpace, transferCache: number, layout: GoogleLayout, numClasses: number, marker: FreeMarker): void {
  const L = layout.transferCache
  for (let cls = 1; cls < numClasses; cls++) markTransferCache(memory, transferCache + cls * L.stride, L, cls, `the transfer cache of class ${cls}`, marker)
}

/** Shards a sharded transfer cache may have: one per L3 cache, so more than this is damage. */
const MAX_SHARDS = 1024

/**
 * The sharded transfer caches (Static::sharded_transfer_cache_): num_shards_ Shards from shards_,
 * each initialized one with a transfer cache per class (transfer_caches, an array), whose slots
 * hold free objects as the unsharded caches' do. TransferCacheManager's own figure
 * (`tcmalloc.sharded_transfer_cache_free`) counts the same slots.
 */
export function markShardedTransferCaches(memory: AddressSpace, manager: number, layout: GoogleLayout, numClasses: number, marker: FreeMarker): void {
  const L = layout.shardedTransferCache
  if (!L) return
  const {caches, shardCount} = shardedTransferCaches(memory, manager, L, numClasses)
  if (shardCount > MAX_SHARDS) marker.warnings.addDamage('transfer-cache', `the sharded transfer cache (${hex(manager)}) says ${shardCount} shards: not read`, manager)
  for (const {at, shard, cls} of caches) markTransferCache(memory, at, L, cls, `the sharded transfer cache of shard ${shard}, class ${cls}`, marker)
}

/**
 * Each initialized shard's transfer cache of each class (ShardedTransferCacheManager: shards_,
 * num_shards_ of them; a shard's transfer_caches, one cache per class), and the shard count as
 * read (none read past MAX_SHARDS).
 */
export function shardedTransferCaches(memory: AddressSpace, manager: number, L: NonNullable<GoogleLayout['shardedTransferCache']>, numClasses: number): {caches: Array<{at: number; shard: number; cls: number}>; shardCount: number} {
  const shards = memory.readU64(manager + L.shards) ?? 0
  const count = memory.readI32(manager + L.numShards) ?? 0
  const caches: Array<{at: number; shard: number; cls: number}> = []
  if (shards === 0 || count <= 0 || count > MAX_SHARDS) return {caches, shardCount: count}
  for (let s = 0; s < count; s++) {
    const shard = shards + s * L.shardStride
    if (memory.readU8(shard + L.shardInitialized) !== 1) continue
    const first = memory.readU64(shard + L.shardCaches) ?? 0
    if (first === 0) continue
    for (let cls = 1; cls < numClasses; cls++) caches.push({at: first + cls * L.cacheStride, shard: s, cls})
  }
  return {caches, shardCount: count}
}

/** One transfer cache's slots: slot_info_ {used, capacity}, slots_[0 .. used) each a free object of its class. */
function markTransferCache(memory: AddressSpace, at: number, L: {slotInfo: number; slots: number}, cls: number, where: string, marker: FreeMarker): void {
  const used = memory.readI32(at + L.slotInfo)
  const capacity = memory.readI32(at + L.slotInfo + 4)
  const slotsAt = memory.readU64(at + L.slots)
  if (used === undefined || capacity === undefined || slotsAt === undefined || used <= 0) return
  if (used > capacity || used > 1 << 16) {
    marker.warnings.addDamage('transfer-cache', `${where} (${hex(at)}) says ${used} used of ${capacity}: not read`, at)
    return
  }
  const slots = memory.readBytes(slotsAt, used * 8)
  if (!slots) return
  const site = {where, structure: at, slot: 0, entry: 0, behind: 0}
  for (let i = 0; i < used; i++) {
    site.slot = slotsAt + i * 8
    marker.mark(u64le(slots, i * 8), cls, TRANSFER_CACHE, site)
  }
}

/**
 * The per-thread caches, in use where per-CPU mode could not start (no rseq) or was turned off:
 * ThreadCache::thread_heaps_ chains them by next_; each has a FreeList per class whose objects
 * link through their first word, length_ of them.
 */
export function markThreadCaches(memory: AddressSpace, threadHeaps: number, layout: GoogleLayout, shift: ShiftLayout, classSize: Float64Array, marker: FreeMarker, firstOwner: number): FrontCache[] {
  const L = layout.threadCache
  const numClasses = shift.numClasses
  const out: FrontCache[] = []
  const seen = new Set<number>()
  let cache = memory.readU64(threadHeaps) ?? 0
  while (cache !== 0 && !seen.has(cache) && seen.size < MAX_THREAD_CACHES) {
    seen.add(cache)
    let objects = 0
    let bytes = 0
    marker.owner = firstOwner + out.length
    for (let cls = 1; cls < numClasses; cls++) {
      const list = cache + shift.threadCacheList + cls * L.freeListStride
      const length = memory.readU32(list + L.freeListLength) ?? 0
      // Each object's first word links the next: a bad one is reported at the word that held it.
      let obj = memory.readU64(list + L.freeListHead) ?? 0
      if (obj === 0) continue
      const walk = Math.min(length, MAX_LIST)
      const site = {where: `thread cache ${hex(cache)}'s list of class ${cls}`, structure: list, slot: list + L.freeListHead, entry: 0, behind: walk - 1}
      for (let n = 0; n < walk && obj !== 0; n++) {
        site.behind = walk - n - 1
        if (!marker.mark(obj, cls, THREAD_CACHE, site)) break
        objects++
        bytes += classSize[cls]!
        site.entry = site.slot = obj
        obj = memory.readU64(obj) ?? 0
      }
    }
    out.push({address: cache, tid: null, inTls: null, bytes, objects, cpu: null})
    cache = memory.readU64(cache + shift.threadCacheNext) ?? 0
  }
  marker.owner = -1
  return out
}
