import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CENTRAL_CACHE} from '../../src/heap/states.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 53: `toma memory` on google/tcmalloc cores (fixtures/google-tcmalloc: gtcdemo). The truth is
// what the process asked tcmalloc just before the dump: MallocExtension's numeric properties, and
// GetStats' text (free objects, spans and the span utilization histogram per class).

const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc', import.meta.url))
const DEBUG_DIR = path.join(DIR, 'debug')

/** A per-CPU, a per-thread, and a per-CPU one with sharded transfer caches, huge regions and returned pages: all release builds. */
const ROWS = ['gtc-2026-08-release-percpu', 'gtc-2026-08-release-perthread', 'gtc-2026-08-release-regions-sharded-percpu']

interface Line {
  part: string
  bytes: number
  property?: string
}

interface Stats {
  /** By object size (classes of one size in several partitions summed): free objects, spans in use. */
  bySize: Map<number, {free: number; spans: number}>
  /** By tcmalloc's class size: the central free list's spans by objects allocated, < 2, < 4, … < 65536. */
  utilization: Map<number, number[]>
}

/** GetStats' per-class lines: `class  17 [ 512 bytes ] : 7481 objs; …; 607 live pages; spans: 0 ret / 607 req = …`. */
function readStats(stats: string): Stats {
  const bySize = new Map<number, {free: number; spans: number}>()
  for (const m of stats.matchAll(/^class\s+\d+ \[\s*(\d+) bytes \] :\s+(\d+) objs;.*? live pages; spans:\s+(\d+) ret \/\s+(\d+) req/gm)) {
    const e = bySize.get(Number(m[1])) ?? {free: 0, spans: 0}
    e.free += Number(m[2])
    e.spans += Number(m[4]) - Number(m[3])
    bySize.set(Number(m[1]), e)
  }
  const utilization = new Map<number, number[]>()
  for (const m of stats.matchAll(/^class\s+\d+ \[\s*(\d+) bytes \] :((?:\s+\d+ < \d+,?)+)$/gm)) {
    const counts = [...m[2]!.matchAll(/(\d+) < \d+/g)].map(x => Number(x[1]))
    const e = utilization.get(Number(m[1])) ?? new Array<number>(counts.length).fill(0)
    counts.forEach((n, i) => (e[i] += n))
    utilization.set(Number(m[1]), e)
  }
  return {bySize, utilization}
}

/** Rows where only the page heap's parts and the filler's shape are checked: 256 KiB pages (8 a hugepage), and older releases. */
const BACK_END_ROWS = ['gtc-2026-08-256k-release-percpu', 'gtc-2024-07-15-release-percpu', 'gtc-2023-02-27-release-percpu']

const sum = (text: string, re: RegExp, group = 1) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[group]), 0)

/**
 * One of the filler's fullness histograms (its title ends `a<= <figure> <b`), summed over every
 * kind of hugepage (regular, donated, released; sparse and dense) and every allocator instance:
 * lower bound → hugepages. All of them must have the same buckets.
 */
function fillerHistogram(stats: string, figure: string): Map<number, number> {
  const out = new Map<number, number>()
  let bounds: string | null = null
  // After a blank line: the same histograms split by allocated spans (2024) follow a line naming the split.
  const title = new RegExp(`(?<=\\n\\n)HugePageFiller: # of [^\\n]*hps with a<= ${figure} <b\\n((?:HugePageFiller: <.*\\n)+)`, 'g')
  for (const m of stats.matchAll(title)) {
    const buckets = [...m[1]!.matchAll(/<\s*(\d+)<=\s*(\d+)/g)].map(x => [Number(x[1]), Number(x[2])] as const)
    const these = buckets.map(b => b[0]).join(',')
    expect(bounds ?? these).toBe(these)
    bounds = these
    for (const [lower, count] of buckets) out.set(lower, (out.get(lower) ?? 0) + count)
  }
  expect(out.size).toBeGreaterThan(0)
  return out
}

/** toma's exact histogram (index: pages → hugepages) in tcmalloc's buckets: each counts a <= pages < the next bucket's a. */
function inBuckets(exact: number[], buckets: Map<number, number>): Map<number, number> {
  const lowers = [...buckets.keys()].sort((a, b) => a - b)
  const out = new Map(lowers.map(l => [l, 0]))
  exact.forEach((count, pages) => {
    const lower = lowers.filter(l => l <= pages).at(-1)!
    out.set(lower, out.get(lower)! + count)
  })
  return out
}

/**
 * The page heap's parts and the filler's shape against GetStats' back-end lines, summed over the
 * huge-page-aware allocator instances it prints (normal, sampled, cold): the free runs by length, the filler's pages free,
 * hugepages total / full / partial / released, its histograms of free pages and of the longest free
 * run; the regions' KiB free and MiB unbacked; the huge cache's hugepages; the huge allocator's.
 */
function checkBackEnd(id: string, report: () => any) {
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, id, 'truth.json'), 'utf8')) as {pageShift: number; stats: string}
  const stats = truth.stats
  const pageSize = 2 ** truth.pageShift
  const HUGE = 2 ** 21

  it('splits the page heap into the filler, regions, huge cache and huge allocator, each as GetStats prints it', () => {
    const parts = report().accounting.heap.parts as Array<Line & {parts?: Line[]}>
    const of = (prefix: string) => {
      const l = parts.find(x => x.part.startsWith(prefix))!
      expect(l.parts, prefix).toBeDefined()
      expect(l.parts!.reduce((n, x) => n + x.bytes, 0)).toBe(l.bytes)
      return (name: string) => {
        const x = l.parts!.find(y => y.part === name)
        expect(x, name).toBeDefined()
        return x!.bytes
      }
    }
    const free = of('page heap free')
    const returned = of('page heap returned')
    expect(free('huge-page filler')).toBe(sum(stats, /^HugePageFiller: (\d+) pages free in/gm) * pageSize)
    expect(free('huge regions')).toBe(sum(stats, /^HugeRegion: \d+ KiB used, (\d+) KiB free/gm) * 1024)
    expect(free('huge cache (whole hugepages)')).toBe(sum(stats, /^HugeCache: (\d+) \/ \d+ hugepages cached/gm) * HUGE)
    expect(returned('huge regions (unbacked)')).toBe(sum(stats, /^HugeRegion: .*? KiB contiguous space, (\d+) MiB unbacked/gm) * 2 ** 20)
    expect(returned('huge allocator (whole hugepages)')).toBe(sum(stats, /^HugeAllocator: .* = (\d+) hugepages free/gm) * HUGE)
    // No fixture's filler has released pages (its own figure of them is a rounded MiB): none is found.
    expect(sum(stats, /^HugePageFiller: (?:Overall, )?\d+ total, \d+ full, \d+ partial, (\d+) released/gm)).toBe(0)
    expect(returned('huge-page filler (released pages)')).toBe(0)
  })

  it("gives the page heap's free runs by length as GetStats lists them: each length below its large bound, the large ones counted together", () => {
    const listed = new Map<number, number>()
    for (const m of stats.matchAll(/^\s*(\d+) pages \*\s+(\d+) spans ~/gm)) listed.set(Number(m[1]), (listed.get(Number(m[1])) ?? 0) + Number(m[2]))
    const bounds = [...stats.matchAll(/^\s*>=(\d+) large \*\s+\d+ spans ~/gm)].map(m => Number(m[1]))
    expect(new Set(bounds).size).toBe(1)
    const large = sum(stats, /^\s*>=\d+ large \*\s+(\d+) spans ~/gm)
    const mine = new Map<number, number>()
    let mineLarge = 0
    for (const r of report().pageHeap.runs as Array<{pages: number; normal: number; returned: number}>) {
      if (r.pages >= bounds[0]!) mineLarge += r.normal + r.returned
      else mine.set(r.pages, r.normal + r.returned)
    }
    expect(mine).toEqual(listed)
    expect(mineLarge).toBe(large)
    expect([...listed.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(10)
  })

  it("gives the filler's hugepages by fullness as GetStats counts them", () => {
    const h = report().hugePageFill
    expect(h.pagesPerHugePage).toBe(HUGE / pageSize)
    const overall = /^HugePageFiller: (?:Overall, )?(\d+) total, (\d+) full, (\d+) partial, (\d+) released/gm
    expect(h.hugePages).toBe(sum(stats, overall, 1))
    expect(h.hugePages).toBeGreaterThan(10)
    expect(h.full).toBe(sum(stats, overall, 2))
    expect(h.partial).toBe(sum(stats, overall, 3))
    expect(h.released).toBe(sum(stats, overall, 4))
    expect(h.freePages).toBe(sum(stats, /^HugePageFiller: (\d+) pages free in/gm))
    expect(h.freePages + h.usedPages + h.releasedPages).toBe(h.hugePages * h.pagesPerHugePage)
    const free = fillerHistogram(stats, '# of free pages')
    expect(inBuckets(h.byFreePages, free)).toEqual(free)
    // The longest-free-run histograms leave out the donated hugepages (tails of large blocks), which
    // toma does not tell apart: toma's have those and no other more, in some bucket or other.
    const longest = fillerHistogram(stats, 'longest free range')
    const donated = [...stats.matchAll(/(?<=\n\n)HugePageFiller: # of donated hps with a<= # of free pages <b\n((?:HugePageFiller: <.*\n)+)/g)].reduce((n, m) => n + sum(m[1]!, /<\s*\d+<=\s*(\d+)/g), 0)
    const mine = inBuckets(h.byLongestFree, longest)
    const extra = [...mine].map(([lower, n]) => n - longest.get(lower)!)
    expect(extra.every(n => n >= 0)).toBe(true)
    expect(extra.reduce((a, b) => a + b, 0)).toBe(donated)
  })
}

/** Runs `toma memory --json` on a fixture before the describe's tests (its index in a folder of its own, removed after). */
function memoryRun(id: string): {work: string; report: any} {
  const run = {work: '', report: null as any}
  beforeAll(async () => {
    run.work = testTemp('toma-memory-gtc-')
    const core = await sparseCorePath(path.join(DIR, id, 'core.sparse.br'))
    const m = await runToma(['memory', core, '--exe', path.join(DIR, id, 'gtcdemo'), '--debug-file-directory', DEBUG_DIR, '--index', path.join(run.work, 'x.toma-index'), '--json', '--examples', '0'], {cwd: run.work})
    expect(m.status, m.stderr).toBe(0)
    run.report = JSON.parse(m.stdout)
  }, 180_000)
  afterAll(() => {
    if (run.work) fs.rmSync(run.work, {recursive: true, force: true})
  })
  return run
}

describe.each(BACK_END_ROWS)("toma memory: the page heap's parts and the filler (%s)", id => {
  const run = memoryRun(id)
  checkBackEnd(id, () => run.report)
})

describe.each(ROWS)('toma memory (%s)', id => {
  const run = memoryRun(id)
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, id, 'truth.json'), 'utf8')) as {properties: Record<string, number>; stats: string}
  const p = truth.properties
  const part = (prefix: string) => {
    const l = run.report.accounting.heap.parts.find((x: Line) => x.part.startsWith(prefix))
    expect(l, prefix).toBeDefined()
    return l.bytes as number
  }

  it('accounts for every byte of the writable mappings once, with no remainder', () => {
    const a = run.report.accounting
    expect(a.lines.reduce((n: number, l: Line) => n + l.bytes, 0) + a.remainder).toBe(a.mapped.bytes)
    expect(a.remainder).toBe(0)
    expect(a.heap.outsideSegments).toBe(0)
    // google/tcmalloc's heap_size leaves out the pages returned to the system; its spans hold them.
    expect(a.lines[0].bytes).toBe(p['generic.heap_size']! + p['tcmalloc.page_heap_unmapped']!)
    expect(a.heap.bytes).toBe(a.lines[0].bytes)
  })

  it('splits the heap into parts that add up to its spans, each the property the process gave for it', () => {
    const h = run.report.accounting.heap
    expect(h.parts.reduce((n: number, l: Line) => n + l.bytes, 0)).toBe(h.bytes)
    // Every line naming one property is that property's value, as the process read it.
    const named = h.parts.filter((l: Line) => l.property && !l.property.includes(' '))
    expect(named.map((l: Line) => l.property).sort()).toEqual(
      ['generic.current_allocated_bytes', 'tcmalloc.cpu_free', 'tcmalloc.thread_cache_free', 'tcmalloc.transfer_cache_free', 'tcmalloc.sharded_transfer_cache_free', 'tcmalloc.page_heap_free', 'tcmalloc.page_heap_unmapped'].sort(),
    )
    for (const l of named) expect(l.bytes, l.part).toBe(p[l.property!])
    expect(part('free in central lists') + part('span tail waste')).toBe(p['tcmalloc.central_cache_free'])
    expect(part(p['tcmalloc.per_cpu_caches_active'] ? 'free in per-CPU caches' : 'free in per-thread caches')).toBeGreaterThan(0)
  })

  it('counts each class\'s free objects and spans as GetStats lists them', () => {
    const stats = readStats(truth.stats)
    const toma = new Map<number, {free: number; spans: number}>()
    for (const c of run.report.fragmentation.classes) {
      const e = toma.get(c.size) ?? {free: 0, spans: 0}
      e.free += c.spans * c.objectsPerSpan - c.liveObjects
      // A class of one object per span hands out and takes back whole spans: GetStats counts none of its spans.
      if (c.objectsPerSpan > 1) e.spans += c.spans
      toma.set(c.size, e)
    }
    // Both sides leave out the classes with no span kept and no free object (GetStats lists every class).
    const kept = (m: Map<number, {free: number; spans: number}>) => new Map([...m].filter(([, e]) => e.spans > 0 || e.free > 0))
    expect(kept(toma)).toEqual(kept(stats.bySize))
    expect([...kept(toma).values()].filter(e => e.spans > 0).length).toBeGreaterThan(25)
    // Where the free objects are adds up to the process's figures of each place.
    const freeIn = (k: string) => run.report.fragmentation.classes.reduce((n: number, c: any) => n + c.freeBytes[k], 0)
    expect(freeIn('threadCaches')).toBe(p['tcmalloc.cpu_free']! + p['tcmalloc.thread_cache_free']!)
    expect(freeIn('transfer')).toBe(p['tcmalloc.transfer_cache_free']! + p['tcmalloc.sharded_transfer_cache_free']!)
    expect(freeIn('central') + part('span tail waste')).toBe(p['tcmalloc.central_cache_free'])
  })

  it('holds each span\'s slots as the central free list does: its span utilization histogram, class by class', () => {
    // The histogram counts every span of a class by its objects handed out (live, or in a cache):
    // all but those on the span's own free list.
    const stats = readStats(truth.stats)
    const index = HeapIndex.open(path.join(run.work, 'x.toma-index'))!
    try {
      const toma = new Map<number, number[]>()
      for (let s = 0; s < index.spanStart.length; s++) {
        // A class of one object per span keeps no span of it (as above): none is in the histogram.
        if (index.spanLocation[s] !== 0 || index.spanSizeClass[s] === 0 || index.spanObjectCount[s] === 1) continue
        const first = index.spanFirstObject[s]!
        const slots = index.spanObjectCount[s]!
        let central = 0
        for (let id = first; id < first + slots; id++) if (index.objects.state[id] === CENTRAL_CACHE) central++
        const size = index.spanObjectSize[s]!
        const e = toma.get(size) ?? new Array<number>(16).fill(0)
        e[Math.max(0, Math.floor(Math.log2(Math.max(1, slots - central))))]!++
        toma.set(size, e)
      }
      const listed = new Map([...stats.utilization].filter(([, e]) => e.some(n => n > 0)))
      expect(toma).toEqual(listed)
      expect(toma.size).toBeGreaterThan(25)
    } finally {
      index.close()
    }
  })

  checkBackEnd(id, () => run.report)

  it('says in text which CPU\'s or thread\'s cache holds free objects of nearly empty spans', async () => {
    const t = await runToma(['memory', path.join(run.work, 'x.toma-index')], {cwd: run.work})
    expect(t.status, t.stderr).toBe(0)
    expect(t.stdout).toMatch(/^remainder \(no line explains it\)\s+0\s/m)
    const holders = run.report.fragmentation.cachePins.map((c: {cpu: number | null; tid: number | null}) => (c.cpu !== null ? `CPU ${c.cpu}` : c.tid === null ? '\\?' : String(c.tid)))
    expect(holders.length).toBeGreaterThan(0)
    if (p['tcmalloc.per_cpu_caches_active']) expect(holders.every((h: string) => h.startsWith('CPU '))).toBe(true)
    for (const h of holders) expect(t.stdout).toMatch(new RegExp(`^\\s*${h}\\s+0x`, 'm'))
    // The page heap's parts under their line, and the filler's hugepages, as the JSON gives them.
    const filler = run.report.accounting.heap.parts.find((l: Line) => l.part.startsWith('page heap free')).parts.find((l: Line) => l.part === 'huge-page filler')
    expect(t.stdout).toMatch(new RegExp(`^  of which huge-page filler\\s+${filler.bytes.toLocaleString('en-US')}\\s`, 'm'))
    expect(t.stdout).toContain(`The huge-page filler: ${run.report.hugePageFill.hugePages} hugepages of ${run.report.hugePageFill.pagesPerHugePage} pages (${run.report.hugePageFill.full} full,`)
  })
})
