import {TomaError, hex} from '../errors.js'
import {USER_SPACE_END, type AddressSpace, type Segment} from '../core/address-space.js'
import {PF_W} from '../core/core-header.js'
import {describeAllocatorModule} from '../heap/allocator-module.js'
import {DamageLog} from '../heap/damage.js'
import type {CrossCheck, ModelledHeap, ModelOptions, StatePlace} from '../heap/heap-model.js'
import {Warnings} from '../heap/warnings.js'
import {PAGE_HEAP, RETURNED, THREAD_CACHE, TRANSFER_CACHE} from '../heap/states.js'
import {readFreePages, HUGE_PAGE, type BackEndPart, type FreeRange} from './back-end.js'
import type {Program} from '../program/program.js'
import {sharedUint8} from '../util/shared-arrays.js'
import {u64le} from '../util/u64le.js'
import {FreeMarker} from './free-marker.js'
import {markPerCpuCaches, markShardedTransferCaches, markThreadCaches, markTransferCaches, type FrontCache} from './front-end.js'
import {SYMBOL, globalsBySymbol, moduleWithSymbols, type GoogleGlobals} from './globals.js'
import {findCpuCache, findPageAllocator, findPageMap, findShardedTransferCache, findSizeMap, findThreadHeaps, findTransferCache, readDataWords, type DataWords, type PageMapMatch} from './signatures.js'
import {spanIndexAt} from '../heap/slot-table.js'
import type {LoadedModule} from '../program/program.js'
import path from 'node:path'
import {GOOGLE_TCMALLOC_LAYOUTS} from './layouts.js'
import {classBytesOf, type GoogleLayout, type ShiftLayout} from './layout.js'
import {walkPageMap, type PageEntry, type PageMapWalk} from './page-map.js'
import {dwarfLayoutOf, type DwarfReading} from './dwarf-reading.js'
import {DWARF_FAMILY} from './layout-from-dwarf.js'
import {layoutDifferences} from './layout-differences.js'
import {describeFirstPage, layoutFirstPage, probeFirstPage, type FirstPageField} from './first-page-probe.js'
import {readSampledAllocations} from './sampled.js'
import {markSpanFreeObjects} from './span-free.js'
import {freedSpanRecords, readSpanRecord, readSpans, type ClassSizes, type GoogleSpanTable} from './spans.js'

/** The heap as google/tcmalloc sees it, with what the model found it by. */
export interface GoogleHeap extends ModelledHeap {
  globals: GoogleGlobals
  layout: GoogleLayout
  pageShift: number
  shift: ShiftLayout
  spans: GoogleSpanTable
  classes: ClassSizes
  /** tcmalloc's class of each compact class the index keeps (compact 0 = no class). */
  classOfCompact: number[]
  frontCaches: FrontCache[]
  perCpuActive: boolean
  pageMapWalk: PageMapWalk
  /** Per sample (sampled.ts), the slot of its proxy, tcmalloc's own live object; -1: none. */
  sampledProxy: Float64Array
  /** How the family and the page size were told. */
  how: string
}

/** Page shifts google/tcmalloc builds with (common.h): 8 KiB default, 256 KiB, 32 KiB, 4 KiB small-but-slow. */
const PAGE_SHIFTS = [13, 18, 15, 12]
/** Page-map entries a candidate layout is tried on before the whole map is walked with it. */
const PROBE_ENTRIES = 512

/**
 * Which family's layout and which page size this build has. Nothing in memory says either, so
 * each candidate walks the first entries of the page map and reads the span records they name:
 * with the right geometry a record's first_page_ equals the page that names it. The candidate
 * with the most such spans wins. Families whose span records agree on every field the probe
 * reads tie (mongo-20240522's and 2024-12's; 2024-12's and 2025-06's where pointers are not
 * packed): then the one with more of its globals where its layout puts them (`globalsFit`) wins.
 * A winner, or a family given by --tcmalloc-version, must have most of its globals in place: one
 * global damaged is a warning (`misfits`), a layout that fits less is not taken. No span at all,
 * or a tie that stays, is an error that says what was tried.
 */
function chooseLayout(
  memory: AddressSpace,
  pageMap: number,
  forced: string | undefined,
  fit: (layout: GoogleLayout, shift: ShiftLayout) => GlobalsFit,
  dwarf: DwarfReading,
): ChosenLayout {
  const notes = dwarf.note ? [dwarf.note] : []
  const fromDwarf = dwarf.layout
  if (fromDwarf && forced) notes.push(`the layout in the DWARF of ${fromDwarf.from} is not read: --tcmalloc-version gave the family`)
  else if (fromDwarf) {
    const shifts = fromDwarf.pageShift === null ? PAGE_SHIFTS : [fromDwarf.pageShift]
    const read = attempt(() => chooseAmong(memory, pageMap, [fromDwarf.layout], shifts, undefined, fit))
    if (!(read instanceof TomaError)) return checkedAgainstTable(memory, pageMap, fit, fromDwarf.from, read, notes)
    notes.push(`the layout in the DWARF of ${fromDwarf.from} does not read this core (${read.message}): the table's families are tried`)
  }
  // A family given names both its build modes (`2026-08`) or one (`2026-08-release`).
  const layouts = forced ? GOOGLE_TCMALLOC_LAYOUTS.filter(l => l.family === forced || `${l.family}-${l.build}` === forced) : GOOGLE_TCMALLOC_LAYOUTS
  if (layouts.length === 0) throw new TomaError(`no google/tcmalloc layout family '${forced}' (known: ${[...new Set(GOOGLE_TCMALLOC_LAYOUTS.flatMap(l => (l.build ? [l.family, `${l.family}-${l.build}`] : [l.family])))].join(', ')})`)
  const chosen = attempt(() => chooseAmong(memory, pageMap, layouts, PAGE_SHIFTS, forced, fit))
  // A refusal after the DWARF was tried says why the DWARF did not serve, in the same line.
  if (chosen instanceof TomaError) throw notes.length > 0 ? new TomaError(`${chosen.message} (and ${notes.join('; ')})`) : chosen
  return {...chosen, notes}
}

/** What a refusal asks for: the layout of a build no family covers is in its own DWARF. */
const DWARF_HINT = "give toma the executable's DWARF (the unstripped executable, or its debug file by build-id under --debug-file-directory) to read its layout from"

/** A layout chosen, how, the globals out of place under it, and what the analysis must say of its source. */
interface ChosenLayout {
  layout: GoogleLayout
  pageShift: number
  how: string
  misfits: string[]
  /** Warnings: the DWARF was not read or disagrees with the table (each field named). */
  notes: string[]
}

/**
 * A layout read from the build's DWARF, held against the table: where a family of the table reads
 * this core too, every field they disagree on is a warning (the DWARF's layout is the build's own,
 * so it is the one read); where they agree, the reading is that family's, from DWARF.
 */
function checkedAgainstTable(
  memory: AddressSpace,
  pageMap: number,
  fit: (layout: GoogleLayout, shift: ShiftLayout) => GlobalsFit,
  from: string,
  read: Omit<ChosenLayout, 'notes'>,
  notes: string[],
): ChosenLayout {
  const table = attempt(() => chooseAmong(memory, pageMap, GOOGLE_TCMALLOC_LAYOUTS, [read.pageShift], undefined, fit))
  const source = `layout from the DWARF of ${from}`
  if (table instanceof TomaError) return {...read, how: `${source}, which no family of the table covers (${read.how})`, notes}
  const differences = layoutDifferences(table.layout, read.layout, read.pageShift)
  if (differences.length === 0) {
    const layout = {...read.layout, family: table.layout.family, build: table.layout.build, covers: `${table.layout.covers}; read from the DWARF of ${from}`}
    return {...read, layout, how: `${source}, the same as the table's family ${familyName(table.layout)} (${read.how})`, notes}
  }
  notes.push(`the DWARF of ${from} and the table's family ${familyName(table.layout)} disagree on ${differences.join(', ')}: the DWARF's layout is read`)
  return {...read, how: `${source}, which differs from the table's family ${familyName(table.layout)} (${read.how})`, notes}
}

/** What `run` returns, or the TomaError it threw (a refusal to be said in other words). */
function attempt<T>(run: () => T): T | TomaError {
  try {
    return run()
  } catch (e) {
    if (e instanceof TomaError) return e
    throw e
  }
}

/** chooseLayout's probe over some layouts and page shifts: the best reading, or the one-line refusal. */
function chooseAmong(
  memory: AddressSpace,
  pageMap: number,
  layouts: readonly GoogleLayout[],
  pageShifts: readonly number[],
  forced: string | undefined,
  fit: (layout: GoogleLayout, shift: ShiftLayout) => GlobalsFit,
): Omit<ChosenLayout, 'notes'> {
  const scores: Array<{layout: GoogleLayout; pageShift: number; starts: number; entries: PageEntry[]}> = []
  for (const layout of layouts) {
    for (const pageShift of pageShifts) {
      const shift = layout.shifts[String(pageShift)]
      if (!shift) continue
      const walk = walkPageMap(memory, pageMap, layout, pageShift, classBytesOf(shift), PROBE_ENTRIES)
      let starts = 0
      for (const e of walk.entries) if (readSpanRecord(memory, e.record, layout, pageShift)?.firstPage === e.page) starts++
      scores.push({layout, pageShift, starts, entries: walk.entries})
    }
  }
  scores.sort((a, b) => b.starts - a.starts)
  const top = scores[0]
  if (!top || top.starts === 0) {
    throw new TomaError(
      `google/tcmalloc's page map at ${hex(pageMap)} names no span under any known layout (families ${layouts.map(l => `${familyName(l)} (${l.covers})`).join(', ')}; pages of ${pageShifts.map(p => 2 ** p / 1024).join(', ')} KiB): this snapshot's layout is not known${closestFamily(memory, scores)}; ${DWARF_HINT}`,
    )
  }
  const name = (s: (typeof scores)[number]) => `${s.layout.family === DWARF_FAMILY ? "the DWARF's layout" : `family ${familyName(s.layout)}`} with ${2 ** s.pageShift / 1024} KiB pages`
  const tied = scores.filter(s => s.starts === top.starts).map(s => ({...s, fit: fit(s.layout, s.layout.shifts[String(s.pageShift)]!)}))
  const share = (f: GlobalsFit) => (f.checked === 0 ? 1 : f.misfits.length === 0 ? 1 : (f.checked - f.misfits.length) / f.checked)
  tied.sort((a, b) => share(b.fit) - share(a.fit))
  const best = tied[0]!
  if (share(best.fit) <= 0.5) {
    throw new TomaError(
      `google/tcmalloc's page map at ${hex(pageMap)} reads as ${name(best)}, but these globals are not where that layout puts them: ${best.fit.misfits.join(', ')}; this snapshot's layout is not known${forced ? ' (the family was given by --tcmalloc-version)' : `; ${DWARF_HINT}`}`,
    )
  }
  if (tied.length > 1 && share(tied[1]!.fit) === share(best.fit)) {
    throw new TomaError(`google/tcmalloc's page map at ${hex(pageMap)} reads alike under ${tied.map(name).join(' and ')}, and their globals fit as well under ${tied.filter(t => share(t.fit) === share(best.fit)).map(name).join(' and ')}: give --tcmalloc-version`)
  }
  const alike = tied.length > 1 ? `, as under ${tied.slice(1).map(name).join(', ')}; its globals are where its layout puts them` : ''
  return {layout: best.layout, pageShift: best.pageShift, how: `${name(best)}: ${best.starts} of the first page-map entries start spans under it${alike}`, misfits: best.fit.misfits}
}

/**
 * Which candidate came closest, for the refusal: the one under whose page-map walk the most span
 * records keep the naming page in one word, and where that word is against where its family
 * puts it (`first-page-probe.ts`).
 */
function closestFamily(memory: AddressSpace, scores: ReadonlyArray<{layout: GoogleLayout; pageShift: number; entries: PageEntry[]}>): string {
  let best: {layout: GoogleLayout; pageShift: number; field: FirstPageField} | null = null
  for (const s of scores) {
    const field = probeFirstPage(memory, s.entries, s.pageShift)
    if (field && field.matches > 1 && (!best || field.matches / field.records > best.field.matches / best.field.records)) best = {layout: s.layout, pageShift: s.pageShift, field}
  }
  if (!best) return ''
  const {layout, pageShift, field} = best
  return `. Closest: family ${familyName(layout)} with ${2 ** pageShift / 1024} KiB pages, whose page map walks, but its span records keep their first page in ${describeFirstPage(field, pageShift)} (${field.matches} of ${field.records} records), where the family puts Span::first_page_ in ${describeFirstPage(layoutFirstPage(layout), pageShift)}`
}

/** A family's name, with its build mode where the mode moves its fields: `2026-08 (release build)`. */
export const familyName = (layout: GoogleLayout): string => (layout.build ? `${layout.family} (${layout.build} build)` : layout.family)

/** How many of a layout's globals were checked, and which are not where it puts them. */
interface GlobalsFit {
  checked: number
  misfits: string[]
}

/** Transfer caches whose owner_ must name the manager for the layout's stride to fit (a few damaged ones do not spoil it). */
const OWNER_QUORUM = 0.9

/**
 * Which of tcmalloc's globals a candidate layout puts where they are, each by its symbol where
 * the module has it, else by its signature: the transfer caches (owner_ at the layout's stride),
 * the page allocator (normal_impl_[0] pointing back at it) and the size map (class_to_size_
 * starting 0, 8, 16, by symbol only: its signature is too loose to tell two offsets apart).
 */
function globalsFit(
  memory: AddressSpace,
  bySymbol: {transferCache: number | null; pageAllocator: number | null; sizeMap: number | null; cpuCache?: number | null; cpuCacheActive?: number | null},
  words: () => DataWords,
) {
  return (layout: GoogleLayout, shift: ShiftLayout): GlobalsFit => {
    const misfits: string[] = []
    let checked = 0
    const check = (what: string, ok: boolean) => {
      checked++
      if (!ok) misfits.push(what)
    }
    const L = layout.transferCache
    const tc = bySymbol.transferCache
    if (tc === null) check('transfer-cache array (by signature)', findTransferCache(memory, words(), layout, shift) !== null)
    else {
      let owned = 0
      for (let c = 1; c < shift.numClasses; c++) if (memory.readU64(tc + c * L.stride + L.owner) === tc) owned++
      check(`transfer-cache array (owner_ of ${owned} of ${shift.numClasses - 1} classes)`, owned >= OWNER_QUORUM * (shift.numClasses - 1))
    }
    const B = shift.backEnd
    const pa = bySymbol.pageAllocator
    if (B) check('page allocator (normal_impl_[0])', pa === null ? findPageAllocator(words(), shift) !== null : memory.readU64(pa + B.normalImpl) === pa)
    const sm = bySymbol.sizeMap
    if (sm !== null) check('size map (class_to_size_)', [0, 8, 16].every((size, c) => memory.readU32(sm + shift.classToSize + c * 4) === size))
    // In per-CPU mode the slab is set up: its slabs_and_shift_ is a pointer with the shift (12..24) in its low byte.
    const cpu = bySymbol.cpuCache ?? null
    const active = bySymbol.cpuCacheActive ?? null
    if (cpu !== null && active !== null && memory.readU8(active) === 1) {
      const raw = memory.readU64(cpu + shift.slabInCpuCache + layout.slab.slabsAndShift) ?? 0
      const bits = raw % 256
      check('per-CPU slab (slabs_and_shift_)', bits >= 12 && bits <= 24 && raw - bits >= 0x10000 && raw < USER_SPACE_END)
    }
    return {checked, misfits}
  }
}

/** SizeMap's class_to_size_ (uint32) and class_to_pages_ (uint8). */
function readClassSizes(memory: AddressSpace, sizeMap: number, shift: ShiftLayout): ClassSizes {
  const n = shift.numClasses
  const sizes = memory.readBytes(sizeMap + shift.classToSize, n * 4)
  const pages = memory.readBytes(sizeMap + shift.classToPages, n)
  if (!sizes || !pages) throw new TomaError(`google/tcmalloc's SizeMap at ${hex(sizeMap)} is not in the core`)
  return {size: Float64Array.from({length: n}, (_, i) => sizes.readUInt32LE(i * 4)), pages: Float64Array.from(pages)}
}

/**
 * Where google/tcmalloc is in the process: the module defining its symbols, else (symbols
 * stripped, or the core alone) the executable whose data holds a page map and a size map by their
 * signatures, unless a gperftools library is loaded by name. Found once per program.
 */
const located = new WeakMap<Program, {module: LoadedModule; pageMap: PageMapMatch | null} | null>()

export function locateGoogleTcmalloc(program: Program): {module: LoadedModule; pageMap: PageMapMatch | null} | null {
  let found = located.get(program)
  if (found !== undefined) return found
  const bySymbol = moduleWithSymbols(program)
  found = null
  if (bySymbol) found = {module: bySymbol, pageMap: null}
  else if (program.executable && !program.modules.some(m => /^libtcmalloc/.test(path.basename(m.module.path)))) {
    const module = program.executable
    const data = readDataWords(program.core.memory, scanSegments(program, module))
    const inModule = (a: number) => program.core.fileAt(a) !== undefined
    // A page map alone could be gperftools' look-alike, or another page size's reading of the
    // same root: the size map of that page size must be there too. Families whose page maps read
    // alike differ in the size map's place: any of them will do here, and chooseLayout tells them apart.
    const pageMap = findPageMap(program.core.memory, data, inModule, match => sizeMapOfPageSize(data, match.pageShift))
    if (pageMap) found = {module, pageMap}
  }
  located.set(program, found)
  return found
}

/** Whether the data holds a size map laid out as some family lays it out for that page size. */
function sizeMapOfPageSize(data: DataWords, pageShift: number): boolean {
  return GOOGLE_TCMALLOC_LAYOUTS.some(l => l.shifts[String(pageShift)] !== undefined && findSizeMap(data, l.shifts[String(pageShift)]!) !== null)
}

/** The allocator, its layout family and page size, and its cache mode, without walking the heap. */
export function identifyGoogleTcmalloc(program: Program): string {
  const where = locateGoogleTcmalloc(program)
  if (!where) throw new TomaError('no google/tcmalloc page map found')
  const pageMap = where.pageMap?.pageMap ?? program.symbolAddress(SYMBOL.pageMap, [where.module])?.address
  if (pageMap === undefined) throw new TomaError('no google/tcmalloc page map found')
  const memory = program.core.memory
  const symbol = (name: string) => (where.pageMap ? null : (program.symbolAddress(name, [where.module])?.address ?? null))
  let data: DataWords | undefined
  const words = () => (data ??= readDataWords(memory, scanSegments(program, where.module)))
  const bySymbol = {transferCache: symbol(SYMBOL.transferCache), pageAllocator: symbol(SYMBOL.pageAllocator), sizeMap: symbol(SYMBOL.sizeMap), cpuCache: symbol(SYMBOL.cpuCache), cpuCacheActive: symbol(SYMBOL.cpuCacheActive)}
  const {layout, pageShift, how} = chooseLayout(memory, pageMap, undefined, globalsFit(memory, bySymbol, words), dwarfLayoutOf(program, where.module))
  const active = program.symbolAddress(SYMBOL.cpuCacheActive, [where.module])?.address
  const mode = active === undefined ? '' : program.core.memory.readU8(active) === 1 ? ', per-CPU caches' : ', per-thread caches (per-CPU mode off)'
  return `google/tcmalloc in ${path.basename(where.module.module.path)}, layout family ${familyName(layout)} (${layout.covers}), ${2 ** pageShift / 1024} KiB pages${mode}; globals by ${where.pageMap ? 'signature' : 'symbol'}; ${how}`
}

/** Bytes of .bss past the module's own segments that a scan follows (a static tcmalloc's page map root alone is 8 MiB). */
const MAX_BSS = 256 * 2 ** 20

/**
 * The module's data as the signature scans need it: its writable segments and every anonymous
 * writable segment that follows them without a gap. A large .bss (tcmalloc's statics run to
 * megabytes) is cut by the kernel into several mappings, and the core keeps each apart.
 */
function scanSegments(program: Program, module: LoadedModule): Segment[] {
  const own = describeAllocatorModule(program, module).dataSegments
  const out = [...own]
  const segments = program.core.memory.segments
  let last = own[own.length - 1]
  let extra = 0
  for (let i = last ? segments.indexOf(last) + 1 : segments.length; i > 0 && i < segments.length && extra < MAX_BSS; i++) {
    const next = segments[i]!
    if (next.start !== last!.end || !(next.flags & PF_W) || program.core.fileAt(next.start)) break
    if (!out.includes(next)) out.push(next)
    extra += next.end - next.start
    last = next
  }
  return out
}

export function analyzeGoogleHeap(program: Program, options: ModelOptions = {}): GoogleHeap {
  const where = locateGoogleTcmalloc(program)
  if (!where) throw new TomaError(`${program.coreFile}: no google/tcmalloc in this process (no module defines Static::pagemap_, and no page map was found in the executable's data)`)
  const loaded = where.module
  const globals = globalsBySymbol(program, loaded, options.signaturesOnly === true)
  const memory = program.core.memory
  const moduleData = scanSegments(program, loaded)
  let data: DataWords | undefined
  const words = () => (data ??= readDataWords(memory, moduleData))
  const bySignature = (name: keyof GoogleGlobals['at'], find: () => number | null) => {
    if (globals.at[name] !== null) return
    globals.at[name] = find()
    globals.how[name] = globals.at[name] === null ? 'not found (no symbol, no signature)' : 'signature'
  }
  options.progress?.('allocator globals', 0, 1)
  let pageMapMatch = where.pageMap
  if (globals.at.pageMap === null) {
    pageMapMatch ??= findPageMap(memory, words(), a => program.core.fileAt(a) !== undefined, match => sizeMapOfPageSize(words(), match.pageShift))
    globals.at.pageMap = pageMapMatch?.pageMap ?? null
    globals.how.pageMap = pageMapMatch ? 'signature' : 'not found (no symbol, no signature)'
  }
  const need = (name: keyof GoogleGlobals['at'], what: string) => {
    const at = globals.at[name]
    if (at === null) throw new TomaError(`google/tcmalloc's ${what} was found neither by its symbol nor by its signature in ${loaded.module.path}`)
    return at
  }
  const {layout, pageShift, how, misfits, notes} = chooseLayout(memory, need('pageMap', 'page map (Static::pagemap_)'), options.version, globalsFit(memory, globals.at, words), dwarfLayoutOf(program, loaded))
  const shift = layout.shifts[String(pageShift)]!
  bySignature('sizeMap', () => findSizeMap(words(), shift))
  bySignature('transferCache', () => findTransferCache(memory, words(), layout, shift))
  bySignature('cpuCache', () => findCpuCache(memory, words(), layout, shift))
  bySignature('pageAllocator', () => findPageAllocator(words(), shift))
  bySignature('shardedTransferCache', () => findShardedTransferCache(memory, words(), layout, shift))
  const classes = readClassSizes(memory, need('sizeMap', 'size map (Static::sizemap_)'), shift)
  const warnings = new Warnings()
  const damage = new DamageLog()
  for (const note of notes) warnings.add('layout', note)
  for (const m of misfits) warnings.addDamage('globals', `family ${familyName(layout)}: the ${m} is not where the family puts it, while the other globals are: read where the family says, it may be damaged`)
  const cut = program.core.truncation
  if (cut) warnings.add('core', `the core is truncated: ${cut.segments} segment(s) miss ${cut.missingBytes} bytes from ${hex(cut.firstAddress)} on; objects there cannot be read`, cut.firstAddress)

  options.progress?.('page map', 0, 1)
  const walk = walkPageMap(memory, globals.at.pageMap!, layout, pageShift, classBytesOf(shift))
  for (const at of walk.unreadable.slice(0, 20)) warnings.add('page-map', `page-map node or leaf ${hex(at)} is not in the core: its spans are missing`, at)
  // The index keeps a class in a byte: tcmalloc's classes (up to 267) are numbered densely in the order spans use them.
  const classOfCompact = [0]
  const compactOf = new Map<number, number>()
  const compact = (cls: number) => {
    let c = compactOf.get(cls)
    if (c === undefined) {
      c = classOfCompact.length
      if (c > 255) throw new TomaError(`more than 255 size classes in use: toma's index keeps a class in one byte`)
      compactOf.set(cls, c)
      classOfCompact.push(cls)
    }
    return c
  }
  const free = readFreePages(memory, walk, layout, pageShift, shift, globals.at.pageAllocator, warnings)
  if (free === null) warnings.add('back-end', `family ${familyName(layout)} with ${2 ** pageShift / 1024} KiB pages: the back end's layout is not known, so its free pages are not counted`)
  // Span records live in tcmalloc's metadata arena; the one in the module's data is kInvalidSpan, which freed first pages name (2025 on).
  const freed = freedSpanRecords(memory, globals.at.spanAllocator, layout, warnings)
  const notSpan = (record: number) => freed.has(record) || program.core.fileAt(record) !== undefined
  const spans = readSpans(memory, walk.entries, layout, pageShift, classes, compact, warnings, free?.ranges ?? [], notSpan)
  const pageSize = 2 ** pageShift
  const state = sharedUint8(spans.totalObjects)
  for (let s = 0; s < spans.count; s++) if (spans.location[s] !== 0) state[spans.firstObject[s]!] = spans.location[s] === 1 ? PAGE_HEAP : RETURNED
  const marker = new FreeMarker(memory, spans, state, pageSize, warnings, damage, cls => classes.size[cls]!, cls => compactOf.get(cls) ?? 0)

  options.progress?.('span free lists', 0, 3)
  markSpanFreeObjects(memory, marker, layout, pageShift)
  options.progress?.('transfer caches', 1, 3)
  // Each place's objects and bytes are what the marker counts while that place is walked (places below).
  const placed = new PlaceCounter(marker)
  markTransferCaches(memory, need('transferCache', 'transfer cache (Static::transfer_cache_)'), layout, shift.numClasses, marker)
  placed.close(TRANSFER_CACHE, 'transfer caches', 'tcmalloc.transfer_cache_free')
  if (globals.at.shardedTransferCache !== null) markShardedTransferCaches(memory, globals.at.shardedTransferCache, layout, shift.numClasses, marker)
  placed.close(TRANSFER_CACHE, 'sharded transfer caches', 'tcmalloc.sharded_transfer_cache_free')
  options.progress?.('front-end caches', 2, 3)
  // Without the flag's symbol, per-CPU mode is on when the slab has been set up.
  const perCpuActive =
    globals.at.cpuCacheActive !== null
      ? memory.readU8(globals.at.cpuCacheActive) === 1
      : globals.at.cpuCache !== null && (memory.readU64(globals.at.cpuCache + shift.slabInCpuCache + layout.slab.slabsAndShift) ?? 0) !== 0
  const frontCaches: FrontCache[] = []
  if (perCpuActive) frontCaches.push(...markPerCpuCaches(memory, need('cpuCache', 'per-CPU cache (Static::cpu_cache_)') + shift.slabInCpuCache, layout, shift.numClasses, classes.size, marker, frontCaches.length))
  placed.close(THREAD_CACHE, 'per-CPU caches', 'tcmalloc.cpu_free')
  bySignature('threadHeaps', () => findThreadHeaps(memory, words(), spans, layout, shift, a => spanIndexAt(spans, pageSize, a)))
  if (globals.at.threadHeaps !== null) frontCaches.push(...markThreadCaches(memory, globals.at.threadHeaps, layout, shift, classes.size, marker, frontCaches.length))
  else if (!perCpuActive) warnings.add('thread-cache', "ThreadCache::thread_heaps_ found neither by symbol nor by signature: objects in per-thread caches are counted live")
  placed.close(THREAD_CACHE, 'per-thread caches', 'tcmalloc.thread_cache_free')
  if (free) for (const part of BACK_END_PARTS) placeBackEndPart(placed, free.ranges, part)
  const objects = new Float64Array(6)
  const bytes = new Float64Array(6)
  let spanWaste = 0
  for (let s = 0; s < spans.count; s++) {
    const size = spans.objectSize[s]!
    const first = spans.firstObject[s]!
    const n = spans.objectCount[s]!
    if (spans.tcmallocClass[s] !== 0 && spans.location[s] === 0) spanWaste += spans.pages[s]! * pageSize - n * size
    for (let k = 0; k < n; k++) {
      const st = state[first + k]!
      objects[st]!++
      bytes[st]! += size
    }
  }
  // Front-end caches sorted by slot, so a query finds the holder of a cached object by binary search.
  const {threadCacheObjects, threadCacheOwner} = cacheOwners(marker)
  const crossCheck = crossCheckCounters(memory, frontCaches, shift, free?.hugeCache ?? null)
  const {sampled, proxySlot} = readSampledAllocations(memory, spans, state, pageSize, layout, warnings)
  return {
    module: describeAllocatorModule(program, loaded),
    globals,
    layout,
    pageShift,
    shift,
    how,
    pageSize,
    spans,
    classes,
    classOfCompact,
    state,
    frontCaches,
    perCpuActive,
    pageMapWalk: walk,
    threadCaches: frontCaches,
    threadCacheObjects,
    threadCacheOwner,
    totals: {objects, bytes, spanWaste, places: placed.places(bytes)},
    ...(free && free.filler.length > 0 ? {hugePageFill: {pagesPerHugePage: HUGE_PAGE / pageSize, hugePages: free.filler}} : {}),
    crossCheck,
    sampled,
    sampledProxy: proxySlot,
    warnings,
    damage,
  }
}

/**
 * What toma walked against what tcmalloc's own counters in the core say (not the process's
 * properties, which a core does not keep): each per-thread cache's size_ against the objects on
 * its lists, and each huge cache's size_ against the hugepages in its map.
 */
function crossCheckCounters(memory: AddressSpace, frontCaches: FrontCache[], shift: ShiftLayout, hugeCache: {walked: number; counted: number} | null): CrossCheck[] {
  const out: CrossCheck[] = []
  const threadCaches = frontCaches.filter(c => c.cpu === null)
  if (threadCaches.length > 0) {
    let counted = 0
    for (const c of threadCaches) counted += memory.readU64(c.address + shift.threadCacheSize) ?? 0
    out.push({name: 'per-thread caches, bytes', property: 'ThreadCache::size_, summed', toma: threadCaches.reduce((n, c) => n + c.bytes, 0), allocator: counted})
  }
  if (hugeCache) out.push({name: 'huge caches, free backed hugepages (bytes)', property: 'HugeCache::size_, summed', toma: hugeCache.walked, allocator: hugeCache.counted})
  return out
}

/** The slots front-end caches hold, ascending, each with the index of the cache holding it. */
function cacheOwners(marker: FreeMarker): {threadCacheObjects: Float64Array; threadCacheOwner: Uint16Array} {
  const slots = marker.ownedSlots
  const order = Uint32Array.from(slots.keys()).sort((a, b) => slots[a]! - slots[b]!)
  return {threadCacheObjects: Float64Array.from(order, i => slots[i]!), threadCacheOwner: Uint16Array.from(order, i => marker.ownedBy[i]!)}
}

/**
 * The objects and bytes the marker counted of one state while one place was walked: the places a
 * state's bytes are split into (StatePlace). Kept only where a state's places add up to its total
 * (a later step that changes a slot's state would make them disagree): else none are given.
 */
class PlaceCounter {
  private readonly list: StatePlace[] = []
  private readonly objectsAt = new Float64Array(8)
  private readonly bytesAt = new Float64Array(8)

  constructor(private readonly marker: FreeMarker) {
    this.objectsAt.set(marker.objects)
    this.bytesAt.set(marker.bytes)
  }

  /** A place whose objects and bytes were counted elsewhere (the back end's free runs). */
  add(place: StatePlace): void {
    this.list.push(place)
  }

  /** Closes a place of `state`: what was marked into it since the last close of that state. */
  close(state: number, place: string, property: string): void {
    const objects = this.marker.objects[state]! - this.objectsAt[state]!
    const bytes = this.marker.bytes[state]! - this.bytesAt[state]!
    this.objectsAt[state] = this.marker.objects[state]!
    this.bytesAt[state] = this.marker.bytes[state]!
    this.list.push({state, place, property, objects, bytes})
  }

  places(totalBytes: Float64Array): StatePlace[] {
    const sums = new Float64Array(8)
    for (const p of this.list) sums[p.state]! += p.bytes
    return this.list.filter(p => sums[p.state] === totalBytes[p.state])
  }
}

/**
 * The page heap's places, as GetStats prints them for each huge-page-aware allocator (summed over
 * them): each part's free runs, backed (page heap free) or given back to the system (returned).
 */
const BACK_END_PARTS: Array<{part: BackEndPart; backed: [string, string] | null; returned: [string, string] | null}> = [
  {part: 'filler', backed: ['huge-page filler', 'HugePageFiller: <n> pages free'], returned: ['huge-page filler (released pages)', 'HugePageFiller: unmapped pages']},
  {part: 'region', backed: ['huge regions', 'HugeRegion: <n> KiB free'], returned: ['huge regions (unbacked)', 'HugeRegion: <n> MiB unbacked']},
  {part: 'cache', backed: ['huge cache (whole hugepages)', 'HugeCache: <n> hugepages cached'], returned: null},
  {part: 'alloc', backed: null, returned: ['huge allocator (whole hugepages)', 'HugeAllocator: <n> hugepages free']},
]

/** Adds a back-end part's free runs to the places of the page heap's states: one run a slot. */
function placeBackEndPart(placed: PlaceCounter, ranges: FreeRange[], {part, backed, returned}: (typeof BACK_END_PARTS)[number]): void {
  for (const [state, names] of [[PAGE_HEAP, backed], [RETURNED, returned]] as const) {
    if (!names) continue
    const mine = ranges.filter(r => r.part === part && r.returned === (state === RETURNED))
    placed.add({state, place: names[0], property: names[1], objects: mine.length, bytes: mine.reduce((n, r) => n + r.bytes, 0)})
  }
}
