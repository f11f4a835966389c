import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {DwarfError} from '../../src/elf/dwarf/cursor.js'
import {parseUnits} from '../../src/elf/dwarf/info.js'
import {dwarfSections} from '../../src/elf/dwarf/sections.js'
import {googleLayoutFromDwarf, TCMALLOC_SOURCE, type DwarfLayout} from '../../src/google-tcmalloc/layout-from-dwarf.js'
import {layoutDifferences} from '../../src/google-tcmalloc/layout-differences.js'
import type {GoogleLayout} from '../../src/google-tcmalloc/layout.js'
import {GOOGLE_TCMALLOC_LAYOUTS} from '../../src/google-tcmalloc/layouts.js'

// google/tcmalloc's layout read from a build's own DWARF (src/google-tcmalloc/layout-from-dwarf.ts).
// The committed fixtures' executables have their DWARF stripped, and give null; what they lost is
// committed as separate debug files (google-tcmalloc/debug, by build-id: tcmalloc's first units),
// and the release build of fce3f55 (2026-08) as a cut of its whole DWARF with units of every kind
// (google-tcmalloc/dwarf, `generate-google-tcmalloc.sh --dwarf`): no test here needs a build.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** fce3f55's release gtcdemo, its DWARF cut to 22 units of every kind (fixtures/README.md), sections uncompressed, the file brotli'd. */
const RELEASE = path.join(ROOT, 'fixtures/google-tcmalloc/dwarf/gtc-2026-08-release.debug.br')
const STRIPPED = path.join(ROOT, 'fixtures/google-tcmalloc/gtc-2026-08-percpu/gtcdemo')
const TYPESDEMO = path.join(ROOT, 'fixtures/typesdemo/typesdemo')

/** The committed debug file of a google-tcmalloc fixture's stripped executable, by its build-id. */
function committedDebugFile(id: string): string {
  const buildId = ElfFile.load(path.join(ROOT, 'fixtures/google-tcmalloc', id, 'gtcdemo')).buildId!
  return path.join(ROOT, 'fixtures/google-tcmalloc/debug/.build-id', buildId.slice(0, 2), `${buildId.slice(2)}.debug`)
}

/**
 * The release build's layout as gdb measured it, not as this reader reads it:
 *   gdb -batch -ex 'ptype /o tcmalloc::tcmalloc_internal::<type>' gtcdemo
 * for Span, SizeMap, ThreadCache, ThreadCache::FreeList (its base LinkedList), PageAllocator,
 * huge_page_allocator_internal::HugePageAwareAllocator<…StaticForwarder>, PageTracker,
 * HugeAddressMap::Node, subtle::percpu::TcmallocSlab<258> and its Header,
 * TransferCacheManager::Cache, MetadataObjectAllocator<Span> and SampledAllocation (the same
 * command's output for most of them is layouts.txt beside the executable). Derived values:
 * numClasses is class_to_size_'s length; stride is sizeof(TransferCacheManager::Cache) (cache_[258]
 * is 429312 bytes); cpuCount is state_ (8) + its len_ (8); bitsWord is first_page_'s byte (bit 192
 * / 8), and the flags' "after" positions are their bits (227 is_large_span_, 228 sampled_, 230
 * small_num_pages_) minus first_page_'s end (192 + 35); kPageShift is 48 − first_page_'s 35 bits.
 */
const RELEASE_TRUTH: GoogleLayout = {
  family: 'dwarf',
  covers: `the layout the DWARF of ${RELEASE} describes`,
  pageMap: {levels: 3, packed: true},
  span: {
    size: 64, embedCount: 16, freelist: 18, allocated: 20, cacheSize: 22, cacheSizeBits: 8,
    record: {kind: 'bitfields', bitsWord: 24, isLargeAfter: 0, sampledAfter: 1, smallNumPagesAfter: 3},
    union: 40, cache: 40, cacheEntries: 12, bitmapBits: 192,
  },
  shifts: {
    '13': {
      numClasses: 258, classToSize: 26544, classToPages: 26286, slabInCpuCache: 0,
      // &((CpuCache<…>*)0)->resize_ 0x20, sizeof(CpuCache<…>::ResizeInfo) 12544, &((ResizeInfo*)0)->lock 0x14.
      cpuResize: {resize: 32, stride: 12544, lock: 20},
      threadCacheList: 0, threadCacheNext: 6224, threadCacheSize: 6192,
      backEnd: {
        normalImpl: 2143656, sampledImpl: 2143672, normalImpls: 2, sampledImpls: 2, coldImpl: 2143688, hasColdImpl: 2143700,
        regionsCount: 698160, allocatorFreeRoot: 698320, cacheRoot: 698416, cacheHugePages: 698480,
        trackerSize: 344, trackerLocation: 16, trackerUsed: 56, trackerReleased: 168,
        // HugeRegion (ptype /o): tracker_.bits_ at 16 (bits_[2048], 131072 pages), location_ 16416,
        // backed_ 20528; the allocator's regions_.list_.head_.next_ at 698176.
        regions: {listHead: 698176, bitmap: 16, location: 16416, backed: 20528, pages: 131072},
        nodeSize: 64, nodeFirst: 0, nodeCount: 8, nodeLeft: 24, nodeRight: 32,
      },
    },
  },
  slab: {slabsAndShift: 0, cpuCount: 16, begins: 24, headerBytes: 4, headerEnd: 2},
  transferCache: {stride: 1664, slotInfo: 32, slots: 40, owner: 1552, lock: 0, centralLock: 48},
  spanAllocatorFreeList: 16,
  // MetadataObjectAllocator<Span> (ptype /o): arena_ 0, metadata_lock_ 8, free_list_ 16.
  spanAllocatorLock: 8,
  threadCache: {freeListStride: 24, freeListHead: 0, freeListLength: 8},
  sampledAllocation: {size: 624, requestedSize: 32, depth: 104, stack: 112, maxDepth: 64},
  // ShardedTransferCacheManagerBase<…BackingTransferCache> (ptype /o): shards_ 0, num_shards_ 8;
  // its Shard is 16 bytes (transfer_caches 0, initialized 12); TransferCache<BackingTransferCache,
  // ShardedStaticForwarder> is 128 (lock_ 0, slot_info_ 32, slots_ 40).
  shardedTransferCache: {shards: 0, numShards: 8, shardStride: 16, shardCaches: 0, shardInitialized: 12, cacheStride: 128, slotInfo: 32, slots: 40, lock: 0},
}

/** A reading, or 'DwarfError': damage may end in either, never in another error. */
function outcome(file: ElfFile): DwarfLayout | {missing: string[]} | null | 'DwarfError' {
  try {
    return googleLayoutFromDwarf(file, file.path)
  } catch (e) {
    if (e instanceof DwarfError) return 'DwarfError'
    throw e
  }
}

describe('layout from DWARF: files it does not apply to', () => {
  it('an executable without DWARF (a committed fixture, stripped) gives null', () => {
    expect(googleLayoutFromDwarf(ElfFile.load(STRIPPED), STRIPPED)).toBeNull()
  })

  it('DWARF without tcmalloc\'s units or types (typesdemo) gives null', () => {
    expect(googleLayoutFromDwarf(ElfFile.load(TYPESDEMO), TYPESDEMO)).toBeNull()
  })
})

describe("layout from DWARF: the committed debug file of fce3f55's release build (its first units)", () => {
  // The DWARF gtc-2026-08-release-percpu's executable lost, by its build-id: what a user's debug-file directory holds.
  const debug = committedDebugFile('gtc-2026-08-release-percpu')

  it('equals what gdb measured on the whole build, and the table\'s release layout', {timeout: 60_000}, () => {
    const read = googleLayoutFromDwarf(ElfFile.load(debug), debug)
    expect(read && 'missing' in read ? read.missing : []).toEqual([])
    const got = read as DwarfLayout
    expect(got.pageShift).toBe(13)
    expect(layoutDifferences(got.layout, RELEASE_TRUTH, 13)).toEqual([])
    expect(layoutDifferences(RELEASE_TRUTH, got.layout, 13)).toEqual([])
    const table = GOOGLE_TCMALLOC_LAYOUTS.find(l => l.family === '2026-08' && l.build === 'release')!
    expect(layoutDifferences(table, got.layout, 13)).toEqual([])
  })
})

describe("the table's 2026-08 layouts against what gdb measured on fce3f55's release build", () => {
  it('the release layout is what gdb measured, field for field', () => {
    const table = GOOGLE_TCMALLOC_LAYOUTS.find(l => l.family === '2026-08' && l.build === 'release')!
    expect(layoutDifferences(table, RELEASE_TRUTH, 13)).toEqual([])
    expect(layoutDifferences(RELEASE_TRUTH, table, 13)).toEqual([])
  })

  it('the debug build\'s layout differs from the release build where gdb says it does', () => {
    const table = GOOGLE_TCMALLOC_LAYOUTS.find(l => l.family === '2026-08' && l.build === 'debug')!
    const differences = layoutDifferences(RELEASE_TRUTH, table, 13)
    expect(differences).toContain('span.size: 64 vs 128')
    expect(differences).toContain('shifts.13.backEnd.trackerUsed: 56 vs 64')
    expect(differences).toContain('transferCache.owner: 1552 vs 1616')
    expect(differences.some(d => d.startsWith('family') || d.startsWith('covers'))).toBe(false)
    expect(layoutDifferences(table, table, 13)).toEqual([])
    expect(layoutDifferences(table, table, 18)).toEqual([])
  })
})

describe("layout from DWARF: fce3f55's release build, its DWARF cut to units of every kind (tcmalloc's first, others of tcmalloc's, abseil's, the program's)", () => {
  /** The debug file's bytes: each test that damages them takes a copy. */
  const original = zlib.brotliDecompressSync(fs.readFileSync(RELEASE))
  const file = ElfFile.fromBuffer(original, RELEASE)

  it('equals what gdb measured, kPageShift 13 included', {timeout: 60_000}, () => {
    const read = googleLayoutFromDwarf(file, RELEASE)
    expect(read).not.toBeNull()
    expect(read && 'missing' in read ? read.missing : []).toEqual([])
    const got = read as DwarfLayout
    expect(got.pageShift).toBe(13)
    expect(got.from).toBe(RELEASE)
    expect(got.layout).toEqual(RELEASE_TRUTH)
    expect(layoutDifferences(got.layout, RELEASE_TRUTH, 13)).toEqual([])
  })

  it('reads tcmalloc\'s units only, skipping the others by length', {timeout: 60_000}, () => {
    const sections = dwarfSections(file)!
    const all = parseUnits(sections, {named: () => false})
    const tcmalloc = parseUnits(sections, {named: name => TCMALLOC_SOURCE.test(name)})
    expect(all.units).toEqual([])
    expect(all.dies.size).toBe(0)
    expect(tcmalloc.units.length).toBeGreaterThan(10)
    expect(all.skipped - tcmalloc.units.length).toBeGreaterThan(0)
    expect(tcmalloc.skipped).toBe(all.skipped - tcmalloc.units.length)
    expect(tcmalloc.parsedBytes).toBeLessThan(sections.info.length)
    // A budget smaller than the first wanted unit ends the reading there, and says so.
    const starved = parseUnits(sections, {named: name => TCMALLOC_SOURCE.test(name), maxBytes: 1000})
    expect(starved).toMatchObject({units: [], exhausted: true, parsedBytes: 0})
  })

  it('a truncated .debug_info is a DwarfError, not a hang', {timeout: 60_000}, () => {
    const index = file.sections.findIndex(s => s.name === '.debug_info')
    const buf = Buffer.from(original)
    // Elf64_Shdr.sh_size (at 0x20 of the section's header) cut to half: the unit there runs past the section's end.
    const header = Number(buf.readBigUInt64LE(0x28)) + index * buf.readUInt16LE(0x3a)
    buf.writeBigUInt64LE(BigInt(Math.floor(file.sections[index]!.size / 2)), header + 0x20)
    expect(outcome(ElfFile.fromBuffer(buf, 'truncated'))).toBe('DwarfError')
  })

  it('random bytes in tcmalloc\'s units give a reading, `missing` or a DwarfError (8 copies)', {timeout: 120_000}, () => {
    const info = file.sections.find(s => s.name === '.debug_info')!
    const first = parseUnits(dwarfSections(file)!, {named: name => /tcmalloc\/static_vars\.cc$/.test(name)}).units[0]!
    let seed = 4242
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    const seen = new Set<string>()
    for (let copy = 0; copy < 8; copy++) {
      const buf = Buffer.from(original)
      // Within static_vars.cc's unit, past its header: the entries the first pass reads.
      for (let k = 0; k < 1 + copy; k++) buf[info.offset + first.offset + 12 + (next() % 200_000)] = next() % 256
      const got = outcome(ElfFile.fromBuffer(buf, 'damaged'))
      seen.add(got === 'DwarfError' ? got : got === null ? 'null' : 'missing' in got ? 'missing' : 'layout')
    }
    expect([...seen].every(o => ['DwarfError', 'null', 'missing', 'layout'].includes(o))).toBe(true)
  })
})

describe("layout from DWARF: the committed debug file of 5da4a88's release build (2024-12, Envoy's pin)", () => {
  // The DWARF gtc-envoy-2024-12-27-release-percpu's executable lost: static_vars.cc, page_allocator.cc and global_stats.cc among its units, the units the reader's first pass reads.
  const debug = committedDebugFile('gtc-envoy-2024-12-27-release-percpu')

  it('equals the table\'s 2024-12 family (gdb\'s ptype /o of a build of the same commit): cache[0] and kLargeCacheSize, SmallSpanState, selsan_impl_, PageMap2', {timeout: 60_000}, () => {
    const read = googleLayoutFromDwarf(ElfFile.load(debug), debug)
    expect(read && 'missing' in read ? read.missing : []).toEqual([])
    const got = read as DwarfLayout
    expect(got.pageShift).toBe(13)
    const table = GOOGLE_TCMALLOC_LAYOUTS.find(l => l.family === '2024-12')!
    // The table's entry, against the DWARF: equal wherever the table places a field (it does not
    // place the regions, which the DWARF does).
    expect(layoutDifferences(table, got.layout, 13)).toEqual([])
    expect(got.layout.shifts['13']!.backEnd!.regions).toBeDefined()
  })
})
