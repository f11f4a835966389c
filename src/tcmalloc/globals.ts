import {TomaError, hex} from '../errors.js'
import {hexWord, readCounter} from '../core/words.js'
import {USER_SPACE_END, type AddressSpace, type Segment} from '../core/address-space.js'
import type {Program} from '../program/program.js'
import type {AllocatorModule} from '../heap/heap-model.js'
import {GROUPS, layoutFor, pageShiftsOf, SPAN, SPAN_LIST_SIZE, type Layout} from './layout.js'
import {readSizeMap, type SizeClasses} from './size-map.js'
import {versionFromFile, versionsFromCore, type CoreHint} from './version.js'
import {groupOfVersion, versionsOfGroup} from './layout.js'
import type {LoadedModule} from '../program/program.js'
import {u64le} from '../util/u64le.js'

const SYM = {
  pageHeap: '_ZN8tcmalloc6Static9pageheap_E',
  centralCache: '_ZN8tcmalloc6Static14central_cache_E',
  sizeMap: '_ZN8tcmalloc6Static8sizemap_E',
  pageHeapLock: '_ZN8tcmalloc6Static14pageheap_lock_E',
  threadHeaps: '_ZN8tcmalloc11ThreadCache13thread_heaps_E',
  threadHeapCount: '_ZN8tcmalloc11ThreadCache18thread_heap_count_E',
}

/** Debian 12's 2.10-1 libraries (group H): fixed positions relative to the exported pageheap_lock_. */
const DEBIAN_210_DELTAS = {pageHeap: -0x1aa1e8, centralCache: -0x27088, sizeMap: -0x1088}

/** Where TCMalloc's globals are in the process, and how each was found. */
export interface AllocatorGlobals {
  layout: Layout
  version: string | null
  versionHow: string
  pageHeap: number
  centralCache: number
  sizeMap: number
  /** Address of the static `ThreadCache::thread_heaps_` pointer, if found. */
  threadHeaps: number | null
  /** Address of the static `ThreadCache::thread_heap_count_` (an int), when its symbol is known: checks the list's length. */
  threadHeapCount: number | null
  sizes: SizeClasses
  how: {pageHeap: string; centralCache: string; sizeMap: string; threadHeaps: string}
  /**
   * What is inconsistent in the page heap found by symbol or by a known build's position (a list
   * caught mid-update, or damaged): the global is kept, each problem is a warning with its address.
   */
  pageHeapProblems: Array<{message: string; address: number; structure: string; counter: boolean; slot: number; impossible?: true}>
}

/** A writable range of the allocator's module, read once for signature scans. */
interface Region {
  start: number
  bytes: Buffer
}

const MAX_SCAN_BYTES = 256 * 1024 * 1024

export interface LocateOptions {
  versionOverride?: string
  /** Ignore symbols and known build positions, find everything by structural signatures (for tests and damaged symbol tables). */
  signaturesOnly?: boolean
}

export function locateGlobals(program: Program, module: AllocatorModule, options: LocateOptions = {}): AllocatorGlobals {
  const memory = program.core.memory
  const pinned = pinnedVersion(module, options.versionOverride)
  // Without the file, the core still names the release: a known build-id, or the file name.
  const hint = pinned ? undefined : versionsFromCore(module.loaded.module.path, module.loaded.module.buildId)
  const hintGroups = [...new Set((hint?.versions ?? []).map(v => groupOfVersion(v)).filter((g): g is string => g !== undefined))]
  const groups = pinned ? [pinned.group] : [...hintGroups, ...[...GROUPS].reverse().filter(g => !hintGroups.includes(g))]

  const regions = readRegions(memory, module.dataSegments)
  const sym = (name: string) => (options.signaturesOnly ? undefined : program.symbolAddress(name, [module.loaded]))
  const failures: string[] = []
  // Groups share most structures: a layout that finds the page heap, central cache and size map may
  // still be the wrong one for the thread caches, or read another group's fields as its own. Every
  // candidate layout is tried until one finds every global and reads page-heap stats that add up;
  // only then is a global declared missing (with the best layout that matched, the earlier on a tie:
  // a core taken while a thread held the page heap's lock may have stats caught mid-update).
  let chosen: {found: Found; layout: Layout; threadHeaps: {address: number; how: string} | undefined; score: number} | undefined
  for (const group of groups) {
    for (const shift of pageShiftsOf(group)) {
      const layout = layoutFor(group, shift)!
      const found = tryLayout(memory, module, regions, layout, sym)
      if (typeof found === 'string') {
        failures.push(`${group}/${2 ** shift / 1024}K: ${found}`)
        continue
      }
      const threadHeaps = findThreadHeaps(memory, regions, layout, found.sizes, sym)
      const score = (threadHeaps ? 2 : 0) + (statsAddUp(memory, found.pageHeap, layout) ? 1 : 0)
      if (!chosen || score > chosen.score) chosen = {found, layout, threadHeaps, score}
      break
    }
    if (chosen?.score === 3) break
  }
  if (!chosen) {
    throw new TomaError(
      `cannot find TCMalloc's page heap, central cache and size map in ${module.loaded.module.path} (${failures.slice(0, 3).join('; ')}${failures.length > 3 ? `; ${failures.length - 3} more layout(s) failed alike` : ''})`,
    )
  }
  const {found, layout, threadHeaps} = chosen
  const {version, versionHow} = pinned ?? versionOfMatch(layout, hint)
  return {
    ...found,
    layout,
    version,
    versionHow,
    threadHeaps: threadHeaps?.address ?? null,
    threadHeapCount: sym(SYM.threadHeapCount)?.address ?? null,
    how: {...found.how, threadHeaps: threadHeaps?.how ?? 'not found (no symbol, no signature match with any layout): thread caches not examined'},
  }
}

/** The release fixed before looking at the core: --tcmalloc-version, or the version string in the library file. */
function pinnedVersion(module: AllocatorModule, versionOverride: string | undefined): {version: string; versionHow: string; group: string} | undefined {
  if (versionOverride) {
    const group = groupOfVersion(versionOverride)
    if (!group) throw new TomaError(`--tcmalloc-version ${versionOverride}: not a gperftools version toma has layouts for (2.0 .. 2.18.1)`)
    return {version: versionOverride, versionHow: '--tcmalloc-version', group}
  }
  if (!module.loaded.file) return undefined
  const v = versionFromFile(module.loaded.file)
  if (v?.group) return {version: v.version!, versionHow: v.how, group: v.group}
  if (v) throw new TomaError(`${module.loaded.module.path}: gperftools ${v.version} has no known layout (toma knows 2.0 .. 2.18.1); try --tcmalloc-version`)
  return undefined
}

/**
 * The release(s) a matched layout stands for: the core's own hint where its layout matched, else
 * every release whose layout reads the same (groups C and D differ only in thread-local storage
 * toma does not read, so a structural match cannot tell 2.4 from 2.5).
 */
function versionOfMatch(layout: Layout, hint: CoreHint | undefined): {version: string; versionHow: string} {
  const hinted = hint?.versions.filter(v => groupOfVersion(v) === layout.group) ?? []
  if (hint && hinted.length) return {version: versionRange(hinted), versionHow: `${hint.how}; its structures match layout group ${layout.group}`}
  const same = GROUPS.filter(g => sameLayout(layoutFor(g, layout.pageShift), layout))
  const versions = same.flatMap(g => versionsOfGroup(g))
  const note = hint ? `; the ${hint.how} names ${versionRange(hint.versions)}, whose layout does not match` : ''
  return {version: versionRange(versions), versionHow: `structure of the core matched layout group ${same.join(', ')}${note}`}
}

function versionRange(versions: string[]): string {
  return versions.length > 1 ? `${versions[0]} .. ${versions[versions.length - 1]}` : (versions[0] ?? '?')
}

/** Two layouts that read every structure toma reads at the same places. */
function sameLayout(a: Layout | undefined, b: Layout): boolean {
  return a !== undefined && JSON.stringify({...a, group: ''}) === JSON.stringify({...b, group: ''})
}

/** ThreadCache::thread_heaps_ by symbol, else by the signature of the list it heads. */
function findThreadHeaps(
  memory: AddressSpace,
  regions: Region[],
  layout: Layout,
  sizes: SizeClasses,
  sym: (name: string) => {address: number; module: LoadedModule} | undefined,
): {address: number; how: string} | undefined {
  const th = sym(SYM.threadHeaps)
  if (th) return {address: th.address, how: `symbol ThreadCache::thread_heaps_ in ${th.module.file?.path ?? th.module.module.path}`}
  const address = scanThreadHeaps(memory, regions, layout, sizes)
  return address === undefined ? undefined : {address, how: 'signature: a pointer to the head of a list of ThreadCaches whose free lists add up to their byte counts'}
}

type Found = Pick<AllocatorGlobals, 'pageHeap' | 'centralCache' | 'sizeMap' | 'sizes' | 'pageHeapProblems'> & {how: {pageHeap: string; centralCache: string; sizeMap: string}}

function tryLayout(
  memory: AddressSpace,
  module: AllocatorModule,
  regions: Region[],
  layout: Layout,
  sym: (name: string) => {address: number} | undefined,
): Found | string {
  const lock = sym(SYM.pageHeapLock)
  const debian = lock && layout.group === 'H' ? lock.address : undefined

  // Size map
  let sizeMap: number | undefined
  let sizeMapHow = ''
  let sizes: SizeClasses | undefined
  const smCandidates: Array<[number, string]> = []
  const smSym = sym(SYM.sizeMap)
  if (smSym) smCandidates.push([smSym.address, 'symbol Static::sizemap_'])
  if (debian !== undefined) smCandidates.push([debian + DEBIAN_210_DELTAS.sizeMap, 'Debian 2.10 position relative to pageheap_lock_'])
  for (const [addr, how] of smCandidates) {
    const r = readSizeMap(memory, addr, layout)
    if (typeof r !== 'string') {
      sizeMap = addr
      sizeMapHow = how
      sizes = r
      break
    }
  }
  if (sizes === undefined) {
    for (const addr of scanSizeMap(regions, layout)) {
      const r = readSizeMap(memory, addr, layout)
      if (typeof r !== 'string') {
        sizeMap = addr
        sizes = r
        sizeMapHow = 'signature: class_to_size_ 0, 8, 16, 32, 48, 64 in the library\'s data'
        break
      }
    }
  }
  if (sizes === undefined || sizeMap === undefined) return 'no valid size map'

  // Central cache
  let centralCache: number | undefined
  let centralHow = ''
  const ccCandidates: Array<[number, string]> = []
  const ccSym = sym(SYM.centralCache)
  if (ccSym) ccCandidates.push([ccSym.address, 'symbol Static::central_cache_'])
  if (debian !== undefined) ccCandidates.push([debian + DEBIAN_210_DELTAS.centralCache, 'Debian 2.10 position relative to pageheap_lock_'])
  for (const [addr, how] of ccCandidates) {
    if (validCentralCache(memory, addr, layout, sizes.count)) {
      centralCache = addr
      centralHow = how
      break
    }
  }
  if (centralCache === undefined) {
    const addr = scanCentralCache(regions, layout).find(a => validCentralCache(memory, a, layout, sizes.count))
    if (addr !== undefined) {
      centralCache = addr
      centralHow = 'signature: entries carrying their own size-class index at a 1216-byte stride, empty list heads self-linked'
    }
  }
  if (centralCache === undefined) return 'no valid central cache array'

  // Page heap
  let pageHeap: number | undefined
  let pageHeapHow = ''
  const phCandidates: Array<[number, string]> = []
  const phSym = sym(SYM.pageHeap)
  if (phSym) {
    if (layout.pageHeapIsPointer) {
      const p = memory.readU64(phSym.address)
      if (p) phCandidates.push([p, 'symbol Static::pageheap_ (a pointer to the PageHeap)'])
    } else phCandidates.push([phSym.address, 'symbol Static::pageheap_'])
  }
  if (debian !== undefined) phCandidates.push([debian + DEBIAN_210_DELTAS.pageHeap, 'Debian 2.10 position relative to pageheap_lock_'])
  // Identified by symbol or a known build's position: kept when its own fields are a page heap's
  // (stats, page map); what hangs from it (free lists, span sets) is validated apart, and a damaged
  // list becomes a warning instead of costing the whole analysis.
  const rejected: string[] = []
  let pageHeapProblems: Found['pageHeapProblems'] = []
  for (const [addr, how] of phCandidates) {
    const identity = pageHeapIdentity(memory, module, addr, layout, false)
    if (identity !== true) {
      rejected.push(`${how} at ${hex(addr)}: ${identity}`)
      continue
    }
    pageHeap = addr
    pageHeapHow = how
    pageHeapProblems = pageHeapListProblems(memory, addr, layout)
    break
  }
  if (pageHeap === undefined) {
    // Found by signature alone: the lists must agree too, unless exactly one candidate is a page
    // heap by its own fields (then its damaged lists are warnings, as above).
    const candidates = scanPageHeap(memory, module, regions, layout)
    const addr = candidates.find(a => pageHeapIdentity(memory, module, a, layout) === true && pageHeapListProblems(memory, a, layout).length === 0)
    const identified = candidates.filter(a => pageHeapIdentity(memory, module, a, layout) === true)
    const chosen = addr ?? (identified.length === 1 ? identified[0] : undefined)
    if (chosen !== undefined) {
      pageHeap = chosen
      pageHeapProblems = pageHeapListProblems(memory, chosen, layout)
      pageHeapHow = layout.pageHeapIsPointer
        ? 'signature: a pointer to a PageHeap whose pagemap_.allocator_ is a code pointer into the library'
        : 'signature: pagemap_.allocator_ is a code pointer into the library, free-list heads link to themselves or to spans'
    } else {
      const first = candidates[0]
      rejected.push(
        candidates.length === 0
          ? 'no signature candidate (pagemap_.allocator_ a code pointer into the library)'
          : `${candidates.length} signature candidate(s), ${identified.length} with a page heap's own fields; the first at ${hex(first!)}: ${pageHeapIdentity(memory, module, first!, layout) === true ? pageHeapListProblems(memory, first!, layout)[0]?.message : pageHeapIdentity(memory, module, first!, layout)}`,
      )
    }
  }
  if (pageHeap === undefined) return `no valid page heap (${rejected.join('; ')})`
  return {pageHeap, centralCache, sizeMap, sizes, pageHeapProblems, how: {pageHeap: pageHeapHow, centralCache: centralHow, sizeMap: sizeMapHow}}
}

/** Reads the data segments, joining adjacent ones: a global may straddle the file-backed page and .bss. */
function readRegions(memory: AddressSpace, segments: Segment[]): Region[] {
  const ranges: Array<{start: number; end: number}> = []
  for (const s of [...segments].sort((a, b) => a.start - b.start)) {
    const last = ranges[ranges.length - 1]
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end)
    else ranges.push({start: s.start, end: s.end})
  }
  const regions: Region[] = []
  let total = 0
  for (const r of ranges) {
    const size = r.end - r.start
    if (total + size > MAX_SCAN_BYTES) break
    const bytes = memory.readBytes(r.start, size)
    if (!bytes) continue
    regions.push({start: r.start, bytes})
    total += size
  }
  return regions
}

/**
 * ThreadCache::thread_heaps_ without symbols: a pointer in the library's data to a ThreadCache
 * with no prev_ whose FreeLists each record their class's object size (E–J), or whose list
 * lengths are all within their limits (A–D). The list it heads must be well formed to the end,
 * each prev_ pointing back, and most of its caches must hold the bytes their lists add up to
 * (size_, or max_size_ − size_left_ in E): that tells groups apart whose caches differ only in
 * that field (E and F), while a thread caught in the middle of an update cannot hide the list.
 */
function scanThreadHeaps(memory: AddressSpace, regions: Region[], layout: Layout, sizes: SizeClasses): number | undefined {
  const tc = layout.threadCache
  const hasSize = tc.freeListSize >= 32 // E–J FreeList has size_ at +24
  /** undefined: not a ThreadCache; else whether its byte count equals what its lists hold. */
  const cacheAt = (p: number): {consistent: boolean} | undefined => {
    const buf = memory.readBytes(p, tc.objectSize)
    if (!buf) return undefined
    let listed = 0
    for (let cl = 1; cl < sizes.count; cl++) {
      const fl = tc.list + cl * tc.freeListSize
      const length = buf.readUInt32LE(fl + layout.freeList.length)
      if (length > 1 << 24 || (hasSize && buf.readInt32LE(fl + 24) !== sizes.size[cl])) return undefined
      if (length === 0 && u64le(buf, fl + layout.freeList.list) !== 0) return undefined
      listed += length * sizes.size[cl]!
    }
    const rd = (off: number, w: number) => (w === 4 ? buf.readInt32LE(off) : Number(buf.readBigInt64LE(off)))
    const size = rd(tc.size, tc.sizeWidth)
    return {consistent: (tc.sizeIsLeft ? rd(tc.maxSize, tc.maxSizeWidth) - size : size) === listed}
  }
  let best: {address: number; caches: number} | undefined
  for (const r of regions) {
    const b = r.bytes
    for (let at = 0; at + 8 <= b.length; at += 8) {
      const v = u64le(b, at)
      // ThreadCaches come from a PageHeapAllocator: 8-aligned (64 only where the class is alignas(64)).
      if (v === 0 || v % 8 !== 0 || !memory.isReadable(v, tc.objectSize)) continue
      if (memory.readU64(v + tc.prev) !== 0 || !cacheAt(v)) continue
      // Every cache's prev_ must point back: a freed ThreadCache (on threadcache_allocator's free
      // list, itself a pointer in the library's data) keeps a stale next_ into the live list, and
      // without this check it would head a list one longer than the real one.
      const seen = new Set<number>()
      let p = v
      let back = 0
      let ok = true
      let consistent = 0
      while (p !== 0 && ok && seen.size < 1 << 16) {
        const cache = seen.has(p) || memory.readU64(p + tc.prev) !== back ? undefined : cacheAt(p)
        if (!cache) ok = false
        else if (cache.consistent) consistent++
        seen.add(p)
        back = p
        p = memory.readU64(p + tc.next) ?? 0
      }
      if (ok && consistent * 2 > seen.size && (!best || seen.size > best.caches)) best = {address: r.start + at, caches: seen.size}
    }
  }
  return best?.address
}

function scanSizeMap(regions: Region[], layout: Layout): number[] {
  const w = layout.sizeMap.classToSizeWidth
  const want = [0, 8, 16, 32, 48, 64]
  const hits: number[] = []
  for (const r of regions) {
    const b = r.bytes
    for (let at = 0; at + want.length * w <= b.length; at += 4) {
      let ok = true
      for (let i = 0; i < want.length && ok; i++) ok = (w === 4 ? b.readInt32LE(at + i * 4) : u64le(b, at + i * 8)) === want[i]
      if (ok && at >= layout.sizeMap.classToSize) hits.push(r.start + at - layout.sizeMap.classToSize)
    }
  }
  return hits
}

function scanCentralCache(regions: Region[], layout: Layout): number[] {
  const c = layout.central
  const hits: number[] = []
  for (const r of regions) {
    const b = r.bytes
    for (let at = 0; at + 4 * c.stride <= b.length; at += 8) {
      if (u64le(b, at + c.sizeClass) !== 0 || u64le(b, at + c.stride + c.sizeClass) !== 1) continue
      if (u64le(b, at + 2 * c.stride + c.sizeClass) !== 2 || u64le(b, at + 3 * c.stride + c.sizeClass) !== 3) continue
      hits.push(r.start + at)
    }
  }
  return hits
}

function validCentralCache(memory: AddressSpace, addr: number, layout: Layout, classes: number): boolean {
  const c = layout.central
  for (let cl = 0; cl < classes; cl++) {
    const e = addr + cl * c.stride
    if (memory.readU64(e + c.sizeClass) !== cl) return false
  }
  // Class 0 is never used: its span lists stay empty, each head linked to itself.
  const empty = addr + c.empty
  const nonempty = addr + c.nonempty
  return (
    memory.readU64(empty + SPAN.next) === empty &&
    memory.readU64(empty + SPAN.prev) === empty &&
    memory.readU64(nonempty + SPAN.next) === nonempty &&
    memory.readU64(nonempty + SPAN.prev) === nonempty
  )
}

function scanPageHeap(memory: AddressSpace, module: AllocatorModule, regions: Region[], layout: Layout): number[] {
  const allocatorAt = layout.pageHeap.pagemap + layout.pageMap.allocator
  const hits: number[] = []
  for (const r of regions) {
    const b = r.bytes
    for (let at = 0; at + 8 <= b.length; at += 8) {
      const v = u64le(b, at)
      if (layout.pageHeapIsPointer) {
        if (v === 0 || v % 8 !== 0) continue
        const alloc = memory.readU64(v + allocatorAt)
        if (alloc !== undefined && module.isCode(alloc)) hits.push(v)
      } else if (module.isCode(v) && at >= allocatorAt) {
        hits.push(r.start + at - allocatorAt)
      }
    }
  }
  return hits
}

/**
 * True when a PageHeap's own fields are one's. Found by symbol or by a known build's position
 * (`bySignature` false), only what no thread changes: the page map's allocator_, a code pointer
 * into the library; its stats may be mid-update or damaged (a block freed twice makes them
 * negative), which pageHeapListProblems reports. Found by signature, the stats must also be whole
 * pages that add up: code pointers are common in a library's data.
 */
function pageHeapIdentity(memory: AddressSpace, module: AllocatorModule, addr: number, layout: Layout, bySignature = true): true | string {
  const allocatorAt = addr + layout.pageHeap.pagemap + layout.pageMap.allocator
  const allocator = memory.readU64(allocatorAt)
  if (allocator === undefined || !module.isCode(allocator)) return `page map allocator_ at ${hex(allocatorAt)} is ${allocator === undefined ? 'not in core' : `${hexWord(memory, allocatorAt)}, no code pointer into the library`}`
  if (bySignature) return statsProblem(memory, addr, layout) ?? true
  // The page size still has to be this layout's: another page size moves the stats (the page map
  // before them is sized by it), and system_bytes, which only grows, must be whole pages of it.
  const systemAt = addr + layout.pageHeap.stats + layout.stats.systemBytes
  const system = memory.readU64(systemAt)
  if (!system || system % layout.pageSize || system >= USER_SPACE_END) return `page heap system_bytes at ${hex(systemAt)} is ${hexWord(memory, systemAt)}, not whole ${layout.pageSize / 1024} KiB pages`
  return true
}

/** What is wrong with a PageHeap's stats (not in the core; not whole pages; free and returned bytes past the system's), or undefined. */
function statsProblem(memory: AddressSpace, addr: number, layout: Layout): string | undefined {
  const st = addr + layout.pageHeap.stats
  const system = memory.readU64(st + layout.stats.systemBytes)
  const free = memory.readU64(st + layout.stats.freeBytes)
  const unmapped = memory.readU64(st + layout.stats.unmappedBytes)
  if (system === undefined || free === undefined || unmapped === undefined) return `page heap stats at ${hex(st)} not in core`
  const ps = layout.pageSize
  if (system % ps || free % ps || unmapped % ps || free + unmapped > system) {
    const exact = (off: number) => readCounter(memory, st + off)
    const values = [exact(layout.stats.systemBytes), exact(layout.stats.freeBytes), exact(layout.stats.unmappedBytes)]
    const negative = values.some(v => v !== undefined && v < 0) ? ': a counter went below zero (more bytes taken off than were added: a span freed twice?)' : ''
    return `page heap stats at ${hex(st)} inconsistent (system ${values[0]}, free ${values[1]}, unmapped ${values[2]} bytes${negative})`
  }
  return undefined
}

/** What is wrong with the lists a PageHeap heads (free lists, large-span lists or sets), each with the head's address. */
function pageHeapListProblems(memory: AddressSpace, addr: number, layout: Layout): AllocatorGlobals['pageHeapProblems'] {
  const ph = layout.pageHeap
  const problems: AllocatorGlobals['pageHeapProblems'] = []
  const stats = statsProblem(memory, addr, layout)
  if (stats) {
    // The word to show: a counter below zero, else the free bytes (whose sum passes the system's).
    const st = addr + ph.stats
    const unmappedAt = st + layout.stats.unmappedBytes
    const belowZero = (readCounter(memory, unmappedAt) ?? 0) < 0
    const slot = belowZero ? unmappedAt : st + layout.stats.freeBytes
    problems.push({message: stats, address: st, structure: `page heap stats ${hex(st)}`, counter: true, slot, ...(belowZero || (readCounter(memory, st + layout.stats.freeBytes) ?? 0) < 0 ? {impossible: true as const} : {})})
  }
  const heads: number[] = []
  for (let i = 0; i < ph.freeCount; i++) heads.push(addr + ph.free + i * SPAN_LIST_SIZE, addr + ph.free + i * SPAN_LIST_SIZE + SPAN.size)
  if (ph.large !== null) heads.push(addr + ph.large, addr + ph.large + SPAN.size)
  for (const h of heads) {
    const next = memory.readU64(h + SPAN.next)
    const prev = memory.readU64(h + SPAN.prev)
    const why =
      next === undefined || prev === undefined
        ? 'not in core'
        : (next === h) !== (prev === h)
          ? `half linked (next ${hexWord(memory, h + SPAN.next)}, prev ${hexWord(memory, h + SPAN.prev)})`
          : next !== h && (!memory.isReadable(next, SPAN.size) || !memory.isReadable(prev, SPAN.size))
            ? `links outside the core (next ${hexWord(memory, h + SPAN.next)}, prev ${hexWord(memory, h + SPAN.prev)})`
            : // Doubly linked: the first span points back to the head, the last one forward to it. (A
              // std::set read as a list, F's layout on a G core, links to tree nodes that do not.)
              next !== h && (memory.readU64(next + SPAN.prev) !== h || memory.readU64(prev + SPAN.next) !== h)
              ? `not linked back (its first span ${hex(next)} and last span ${hex(prev)} do not point to it)`
              : ''
    if (why) problems.push({message: `page heap free list head ${hex(h)} ${why}`, address: h, structure: `page heap free list head ${hex(h)}`, counter: false, slot: h + SPAN.next})
  }
  for (const set of [ph.largeNormal, ph.largeReturned]) {
    if (set === null) continue
    const bad = spanSetProblem(memory, addr + set)
    if (bad) problems.push({message: bad, address: addr + set, structure: `page heap large span set ${hex(addr + set)}`, counter: false, slot: addr + set + RB_TREE.root})
  }
  return problems
}

/**
 * PageHeap::Stats.committed_bytes (C on) is system − unmapped bytes. Where a layout has no such
 * field (A, B) there is nothing to check; where it has, the check tells 2.1 (B, whose
 * scavenge_counter_ sits there) from 2.1.90 .. 2.5 (C, D), whose structures are otherwise read alike.
 */
function statsAddUp(memory: AddressSpace, pageHeap: number, layout: Layout): boolean {
  if (layout.stats.committedBytes === null) return true
  const st = pageHeap + layout.pageHeap.stats
  const system = memory.readU64(st + layout.stats.systemBytes)
  const unmapped = memory.readU64(st + layout.stats.unmappedBytes)
  const committed = memory.readU64(st + layout.stats.committedBytes)
  return system !== undefined && unmapped !== undefined && committed === system - unmapped
}

/** What is wrong with a libstdc++ std::set header at `set` (G–J's large span sets), or undefined. */
function spanSetProblem(memory: AddressSpace, set: number): string | undefined {
  const header = set + RB_TREE.header
  const root = memory.readU64(set + RB_TREE.root)
  const leftmost = memory.readU64(set + RB_TREE.leftmost)
  const rightmost = memory.readU64(set + RB_TREE.rightmost)
  const count = memory.readU64(set + RB_TREE.count)
  if (root === undefined || leftmost === undefined || rightmost === undefined || count === undefined) return `span set at ${hex(set)} not in core`
  if (count === 0) {
    return root === 0 && leftmost === header && rightmost === header ? undefined : `span set at ${hex(set)}: empty, but its header is not`
  }
  // A non-empty tree: the root's parent is the header (SpanList heads read as a set fail here).
  if (count > 2 ** 32) return `span set at ${hex(set)}: its count ${hexWord(memory, set + RB_TREE.count)} is no count of spans`
  if (root % 8 || memory.readU64(root + RB_TREE.nodeParent) !== header) return `span set at ${hex(set)}: root ${hexWord(memory, set + RB_TREE.root)} does not point back to the header ${hex(header)}`
  return undefined
}

/** libstdc++'s _Rb_tree as std::set lays it out (gperftools-layouts.md, SpanSet). */
const RB_TREE = {header: 8, root: 16, leftmost: 24, rightmost: 32, count: 40, nodeParent: 8} as const
