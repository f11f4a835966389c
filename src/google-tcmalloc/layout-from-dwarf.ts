import type {ElfFile} from '../elf/elf-file.js'
import {DW_AT, DW_TAG} from '../elf/dwarf/constants.js'
import {parseUnits, type Die} from '../elf/dwarf/info.js'
import {dwarfSections} from '../elf/dwarf/sections.js'
import {constValueOf, elementCount, elementType, memberPath} from '../elf/dwarf/struct-paths.js'
import {qualifiedName, stripAliases, TypeTable, type DwarfType, type StructType} from '../elf/dwarf/types.js'
import {DwarfTypeFinder, NS, type FoundStruct} from './dwarf-type-finder.js'
import type {GoogleLayout, ShiftLayout} from './layout.js'
import {spanLayoutFromDwarf} from './span-layout-from-dwarf.js'

/** A layout read from a build's own DWARF. */
export interface DwarfLayout {
  layout: GoogleLayout
  /** The build's kPageShift, as its DWARF gives it (see pageShiftOf); null when it does not. */
  pageShift: number | null
  /** The file the DWARF came from (the executable or its separate debug file). */
  from: string
}

/** The family name of a layout read from DWARF: no family of the table, the build's own. */
export const DWARF_FAMILY = 'dwarf'

/** The compile units of tcmalloc's own sources (`tcmalloc/span.cc`, `external/tcmalloc/tcmalloc/static_vars.cc`): they define its types. */
export const TCMALLOC_SOURCE = /(^|\/)tcmalloc\/[^/]+\.cc$/
/**
 * Bytes of tcmalloc's compile units parsed at most, in one pass. Its 39 units hold 9.7 MB of a
 * release build's .debug_info (fce3f55, gcc 12); reading keeps some 35 bytes per byte, so this
 * bounds the memory near 2 GiB for a build whose units are much larger than that.
 */
export const TCMALLOC_DWARF_BUDGET = 64 * 2 ** 20
/** The page shifts a ShiftLayout is keyed under when the DWARF does not give kPageShift: the caller probes them. */
export const PROBED_PAGE_SHIFTS = [13, 18, 15, 12] as const
/** x86-64 and aarch64 Linux addresses have 48 bits (kAddressBits): first_page_ is kAddressBits − kPageShift bits wide (Span::kMaxPageIdBits). */
const ADDRESS_BITS = 48
/** A hugepage is 2 MiB on x86-64 and aarch64 (kHugePageShift, a constant of the build whatever the kernel's pages, when the DWARF does not give it). */
const HUGE_PAGE_SHIFT = 21

/**
 * The google/tcmalloc layout a build's DWARF describes, read from tcmalloc's own compile units
 * alone (the rest of a large program's DWARF is skipped unit by unit, by length). Null when the
 * file has no DWARF or it does not define tcmalloc::tcmalloc_internal::Span; `missing` when the
 * types are there but some field the model reads is not (each named, `Span::first_page_`), so
 * that the caller falls back to its table and says why. Damaged DWARF throws a DwarfError
 * (elf/dwarf/cursor.js), as every DWARF reader here does.
 *
 * Types in type units (.debug_types, DW_UT_type: `-fdebug-types-section`) are not read: such a
 * build's units name their types by signature, and reading gives null or `missing`.
 *
 * layout.shifts holds one ShiftLayout, keyed by the build's kPageShift; where the DWARF does not
 * give it (pageShift null) the same ShiftLayout is keyed under each of PROBED_PAGE_SHIFTS, and the
 * caller's probe of page shifts picks one.
 */
export function googleLayoutFromDwarf(file: ElfFile, from: string): DwarfLayout | {missing: string[]} | null {
  const sections = dwarfSections(file)
  if (!sections) return null
  let read: DwarfLayout | {missing: string[]} | null = null
  for (const units of UNIT_PASSES) {
    const {dies, exhausted} = parseUnits(sections, {named: name => units.test(name), maxBytes: TCMALLOC_DWARF_BUDGET})
    read = layoutFromDies(dies, from)
    if (read && 'layout' in read) return read
    if (exhausted && read) read.missing.push(`tcmalloc's compile units past the first ${TCMALLOC_DWARF_BUDGET} bytes (not read)`)
  }
  return read
}

/**
 * Which of tcmalloc's units are read, in turn, until one reading gives the whole layout: first the
 * three that define Static's members, the page allocator's back end and the sharded transfer
 * caches' own transfer cache (a release build of fce3f55: under a second instead of 3 s for all 39
 * units), then all of tcmalloc's own.
 */
const UNIT_PASSES = [/(^|\/)tcmalloc\/(static_vars|page_allocator|global_stats)\.cc$/, TCMALLOC_SOURCE]

function layoutFromDies(dies: Map<number, Die>, from: string): DwarfLayout | {missing: string[]} | null {
  if (dies.size === 0) return null
  const f = new DwarfTypeFinder(new TypeTable(dies))
  const span = f.structNamed(`${NS}Span`)
  if (!span) return null
  const spanStruct = {...span, label: 'Span'}
  const spanLayout = spanLayoutFromDwarf(f, spanStruct)
  const statics = f.struct('Static')
  const shift = shiftLayoutFromDwarf(f, statics)
  const slab = slabLayoutFromDwarf(f, statics)
  const spanAllocator = f.staticMemberStruct(statics, 'span_allocator_', 'Static::span_allocator_') ?? f.struct('MetadataObjectAllocator<Span>', `MetadataObjectAllocator<${NS}Span>`, `PageHeapAllocator<${NS}Span>`)
  const pageShift = pageShiftOf(dies, f, spanStruct)
  const layout: GoogleLayout = {
    family: DWARF_FAMILY,
    covers: `the layout the DWARF of ${from} describes`,
    pageMap: pageMapFromDwarf(f),
    span: spanLayout,
    shifts: Object.fromEntries((pageShift === null ? PROBED_PAGE_SHIFTS : [pageShift]).map(s => [String(s), shift])),
    slab,
    transferCache: transferCacheFromDwarf(f),
    spanAllocatorFreeList: f.offset(spanAllocator, 'free_list_'),
    ...optionalField('spanAllocatorLock', f.optionalOffset(spanAllocator, 'metadata_lock_')),
    threadCache: threadCacheFromDwarf(f),
    sampledAllocation: sampledAllocationFromDwarf(f),
    ...shardedTransferCacheFromDwarf(f, statics),
  }
  if (f.missing.length > 0) return {missing: [...new Set(f.missing)]}
  return {layout, pageShift, from}
}

/**
 * Static::sharded_transfer_cache_, when the DWARF says all of it: the manager's shards_ and
 * num_shards_, a Shard (what shards_ points at) with its transfer_caches and initialized, and the
 * transfer cache transfer_caches points at, with slot_info_, slots_ and lock_ (the lock where it
 * has one). Optional, as in the table.
 */
function shardedTransferCacheFromDwarf(f: DwarfTypeFinder, statics: FoundStruct | null): Pick<GoogleLayout, 'shardedTransferCache'> {
  // The member's type where Static declares it, else the manager template's one instance.
  const manager = f.staticMemberStruct(statics, 'sharded_transfer_cache_', 'Static::sharded_transfer_cache_') ?? f.structNamed(`${NS}ShardedTransferCacheManagerBase`)
  const shards = manager ? memberPath(manager.type, 'shards_') : null
  const numShards = manager ? memberPath(manager.type, 'num_shards_') : null
  const shard = pointee(shards?.type)
  const caches = shard ? memberPath(shard, 'transfer_caches') : null
  const initialized = shard ? memberPath(shard, 'initialized') : null
  const cache = pointee(caches?.type)
  const slotInfo = cache ? memberPath(cache, 'slot_info_') : null
  const slots = cache ? memberPath(cache, 'slots_') : null
  const lock = cache ? memberPath(cache, 'lock_') : null
  if (!shards || !numShards || !shard || !caches || !initialized || !cache || !slotInfo || !slots) return {}
  return {
    shardedTransferCache: {
      shards: shards.offset,
      numShards: numShards.offset,
      shardStride: shard.size,
      shardCaches: caches.offset,
      shardInitialized: initialized.offset,
      cacheStride: cache.size,
      slotInfo: slotInfo.offset,
      slots: slots.offset,
      ...optionalField('lock', lock?.offset),
    },
  }
}

/** The struct a pointer type points at (through typedefs and qualifiers), or null. */
function pointee(t: DwarfType | undefined): StructType | null {
  const p = t ? stripAliases(t) : null
  const target = p?.kind === 'pointer' && p.target ? stripAliases(p.target) : null
  return target?.kind === 'struct' ? target : null
}

/** PageMap's map_: PageMap3 (77fbeb5 on) or PageMap2 (its kLeafBits); packed where a leaf keeps span_and_sizeclass. */
function pageMapFromDwarf(f: DwarfTypeFinder): GoogleLayout['pageMap'] {
  const map = f.nested(f.place(f.struct('PageMap'), 'map_')?.type, 'PageMap::map_')
  if (!map) return {levels: 2, packed: false, leafBits: f.lacks('PageMap::map_')}
  const levels = map.type.name.startsWith(`${NS}PageMap3<`) ? 3 : map.type.name.startsWith(`${NS}PageMap2<`) ? 2 : f.lacks(`PageMap::map_ (${map.type.name}: neither PageMap2 nor PageMap3)`)
  const leaf = f.structNamed(`${map.type.name}::Leaf`)
  if (!leaf) f.lacks(`${map.type.name}::Leaf`)
  const packed = leaf !== null && leaf.type.members.some(m => m.name === 'span_and_sizeclass')
  if (levels === 3) return {levels: 3, packed}
  return {levels: 2, packed, leafBits: f.constant(map, 'kLeafBits') ?? f.lacks(`${map.type.name}::kLeafBits`)}
}

/** What moves with kNumClasses: SizeMap's arrays, the CPU cache's slab, the thread cache's lists, the back end. */
function shiftLayoutFromDwarf(f: DwarfTypeFinder, statics: FoundStruct | null): ShiftLayout {
  const sizeMap = f.struct('SizeMap')
  const threadCache = f.struct('ThreadCache')
  return {
    numClasses: f.count(sizeMap, 'class_to_size_'),
    classToSize: f.offset(sizeMap, 'class_to_size_'),
    classToPages: f.offset(sizeMap, 'class_to_pages_'),
    slabInCpuCache: f.offset(cpuCacheOf(f, statics), 'freelist_'),
    ...optionalField('cpuResize', cpuResizeFromDwarf(cpuCacheOf(f, statics))),
    threadCacheList: f.offset(threadCache, 'list_'),
    threadCacheNext: f.offset(threadCache, 'next_'),
    threadCacheSize: f.offset(threadCache, 'size_'),
    backEnd: backEndFromDwarf(f),
  }
}

/** CpuCache::resize_, the ResizeInfo it points to and that one's lock, where the build has all three (a lock the model can go without). */
function cpuResizeFromDwarf(cpuCache: FoundStruct | null): ShiftLayout['cpuResize'] {
  const resize = cpuCache ? memberPath(cpuCache.type, 'resize_') : null
  const info = pointee(resize?.type)
  const lock = info ? memberPath(info, 'lock') : null
  return resize && info && lock ? {resize: resize.offset, stride: info.size, lock: lock.offset} : undefined
}

/** Static::cpu_cache_'s type (CpuCache<Static>, whose base holds freelist_), else the CPU cache class by name. */
function cpuCacheOf(f: DwarfTypeFinder, statics: FoundStruct | null): FoundStruct | null {
  return f.staticMemberStruct(statics, 'cpu_cache_', 'CpuCache') ?? f.struct('CpuCache', 'cpu_cache_internal::CpuCache', 'CpuCache', 'CPUCache')
}

function backEndFromDwarf(f: DwarfTypeFinder): NonNullable<ShiftLayout['backEnd']> {
  const pa = f.struct('PageAllocator')
  const hpaa = f.struct('HugePageAwareAllocator', 'huge_page_allocator_internal::HugePageAwareAllocator', 'HugePageAwareAllocator')
  const tracker = f.struct('PageTracker')
  const node = f.struct('HugeAddressMap::Node')
  const selsanImpl = f.optionalOffset(pa, 'selsan_impl_')
  return {
    normalImpl: f.offset(pa, 'normal_impl_'),
    sampledImpl: f.offset(pa, 'sampled_impl_'),
    normalImpls: f.count(pa, 'normal_impl_'),
    sampledImpls: f.count(pa, 'sampled_impl_'),
    coldImpl: f.offset(pa, 'cold_impl_'),
    hasColdImpl: f.offset(pa, 'has_cold_impl_'),
    ...(selsanImpl !== undefined ? {selsanImpl} : {}),
    regionsCount: f.offset(hpaa, 'regions_.n_'),
    allocatorFreeRoot: f.offset(hpaa, 'alloc_.free_.root_'),
    cacheRoot: f.offset(hpaa, 'cache_.cache_.root_'),
    cacheHugePages: f.offset(hpaa, 'cache_.size_'),
    trackerSize: tracker?.type.size ?? NaN,
    trackerLocation: f.offset(tracker, 'location_'),
    trackerUsed: f.offset(tracker, 'free_.bits_'),
    trackerReleased: f.offset(tracker, 'released_by_page_'),
    nodeSize: node?.type.size ?? NaN,
    nodeFirst: f.offset(node, 'range_.first'),
    nodeCount: f.offset(node, 'range_.n'),
    nodeLeft: f.offset(node, 'left_'),
    nodeRight: f.offset(node, 'right_'),
    ...regionsFromDwarf(f, hpaa),
    ...lifetimeRegionsFromDwarf(hpaa),
  }
}

/** The 2023 LifetimeBasedAllocator's region count, where the allocator has one (optional). */
function lifetimeRegionsFromDwarf(hpaa: FoundStruct | null): {lifetimeRegionsCount?: number} {
  const n = hpaa ? memberPath(hpaa.type, 'lifetime_allocator_.lifetime_region_.regions_.n_') : null
  return n ? {lifetimeRegionsCount: n.offset} : {}
}

/**
 * Where the HugeRegionSet's regions are, when the DWARF says all of it: the list head's next_ in
 * the allocator, and in a HugeRegion (a list element at its start, next_ its first word) the
 * used-pages bitmap with its bits, location_ and backed_[]. Optional, as in the table: a build
 * that lays them out otherwise is read with a warning that its regions' free pages are not counted.
 */
function regionsFromDwarf(f: DwarfTypeFinder, hpaa: FoundStruct | null): {regions?: NonNullable<NonNullable<ShiftLayout['backEnd']>['regions']>} {
  const region = f.struct('HugeRegion')
  const head = hpaa ? memberPath(hpaa.type, 'regions_.list_.head_.next_') : null
  const next = region ? memberPath(region.type, 'next_') : null
  const bits = region ? memberPath(region.type, 'tracker_.bits_.bits_') : null
  const words = bits ? elementCount(bits.type) : null
  const location = region ? memberPath(region.type, 'location_.first.pn') : null
  const backed = region ? memberPath(region.type, 'backed_') : null
  if (!head || next?.offset !== 0 || !bits || words === null || !location || !backed) return {}
  return {regions: {listHead: head.offset, bitmap: bits.offset, location: location.offset, backed: backed.offset, pages: words * 64}}
}

/**
 * The per-CPU slab (CpuCache::freelist_'s TcmallocSlab<N>) and its per-class Header: {current,
 * end} (4 bytes, with the begins in the slab's begins_) or {current, end_copy, begin, end}.
 */
function slabLayoutFromDwarf(f: DwarfTypeFinder, statics: FoundStruct | null): GoogleLayout['slab'] {
  const slab = f.nested(f.place(cpuCacheOf(f, statics), 'freelist_')?.type, 'TcmallocSlab') ?? f.struct('TcmallocSlab', 'subtle::percpu::TcmallocSlab', 'TcmallocSlab')
  const header = slab ? f.structNamed(`${slab.type.name}::Header`) : null
  if (slab && !header) f.lacks(`${slab.type.name}::Header`)
  const H = header ? {...header, label: 'TcmallocSlab::Header'} : null
  const headerBytes = H?.type.size === 4 || H?.type.size === 8 ? H.type.size : f.lacks(`TcmallocSlab::Header (${H?.type.size ?? '?'} bytes, not 4 or 8)`)
  const cpuCount = f.optionalOffset(slab, 'state_.len_')
  const begins = headerBytes === 4 ? f.offset(slab, 'begins_') : undefined
  return {
    slabsAndShift: f.offset(slab, 'slabs_and_shift_'),
    ...(cpuCount !== undefined ? {cpuCount} : {}),
    headerBytes: headerBytes as 4 | 8,
    headerEnd: f.offset(H, 'end'),
    ...(headerBytes === 8 ? {headerBegin: f.offset(H, 'begin')} : {}),
    ...(begins !== undefined ? {begins} : {}),
  }
}

/** TransferCacheManager::cache_[]: its element's size, and within it the transfer cache's (tc's) fields. */
function transferCacheFromDwarf(f: DwarfTypeFinder): GoogleLayout['transferCache'] {
  const manager = f.struct('TransferCacheManager')
  const cache = f.place(manager, 'cache_')
  const element = f.nested(cache ? elementType(cache.type) : null, 'TransferCacheManager::cache_[]')
  if (manager && !element) f.lacks('TransferCacheManager::cache_ (an array of structs)')
  return {
    stride: element ? element.type.size : NaN,
    slotInfo: f.offset(element, 'tc.slot_info_', 'slot_info_'),
    slots: f.offset(element, 'tc.slots_', 'slots_'),
    owner: f.offset(element, 'tc.owner_', 'owner_'),
    ...optionalField('lock', f.optionalOffset(element, 'tc.lock_')),
    ...optionalField('centralLock', f.optionalOffset(element, 'tc.freelist_do_not_access_directly_.lock_')),
  }
}

/** A field the model can go without (a lock it then does not read), spread in only where the DWARF has it. */
const optionalField = <K extends string, V>(name: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({[name]: value} as Record<K, V>))

/** ThreadCache::FreeList: its stride in list_[], and its head (list_) and length_ (in its base LinkedList). */
function threadCacheFromDwarf(f: DwarfTypeFinder): GoogleLayout['threadCache'] {
  const list = f.struct('ThreadCache::FreeList')
  return {freeListStride: list ? list.type.size : NaN, freeListHead: f.offset(list, 'list_'), freeListLength: f.offset(list, 'length_')}
}

function sampledAllocationFromDwarf(f: DwarfTypeFinder): NonNullable<GoogleLayout['sampledAllocation']> {
  const s = f.struct('SampledAllocation')
  return {
    size: s ? s.type.size : NaN,
    requestedSize: f.offset(s, 'sampled_stack.requested_size'),
    depth: f.offset(s, 'sampled_stack.depth'),
    stack: f.offset(s, 'sampled_stack.stack'),
    maxDepth: f.count(s, 'sampled_stack.stack'),
    ...optionalField('proxy', f.optionalOffset(s, 'sampled_stack.proxy')),
  }
}

/**
 * The build's kPageShift: the constant itself where the DWARF keeps it (gcc leaves out a
 * namespace-scope constexpr no code takes the address of, so usually it does not); else from
 * first_page_'s width (kAddressBits − kPageShift bits, x86-64's 48-bit addresses); else from the
 * page tracker's bitmap of pages per hugepage (kHugePageShift − kPageShift bits).
 */
function pageShiftOf(dies: Map<number, Die>, f: DwarfTypeFinder, span: FoundStruct): number | null {
  const own = namespaceConstant(dies, `${NS}kPageShift`)
  if (own !== undefined) return own
  const firstPage = f.bitField(span, 'first_page_')
  if (firstPage) return ADDRESS_BITS - firstPage.bitSize
  const tracker = f.structNamed(`${NS}PageTracker`)
  const rangeTracker = tracker?.type.members.map(m => stripAliases(m.type).name).find(n => n.startsWith(`${NS}RangeTracker<`))
  const pages = Number(/<(\d+)>$/.exec(rangeTracker ?? '')?.[1] ?? 0)
  const hugeShift = namespaceConstant(dies, `${NS}kHugePageShift`) ?? HUGE_PAGE_SHIFT
  return pages > 0 && Number.isInteger(Math.log2(pages)) ? hugeShift - Math.log2(pages) : null
}

/** A namespace-scope constant's value (a DW_TAG_variable with DW_AT_const_value), by its qualified name. */
function namespaceConstant(dies: Map<number, Die>, qualified: string): number | undefined {
  const name = qualified.slice(qualified.lastIndexOf('::') + 2)
  for (const die of dies.values()) {
    if (die.tag !== DW_TAG.variable || die.attrs.get(DW_AT.name)?.value !== name) continue
    const v = constValueOf(die)
    if (v !== undefined && qualifiedName(die) === qualified) return v
  }
  return undefined
}
