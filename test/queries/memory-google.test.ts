import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CENTRAL_CACHE} from '../../src/heap/states.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {sparseBrotliCorePath} from '../helpers/fixture-core.js'
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

describe.each(ROWS)('toma memory (%s)', id => {
  let work: string
  let report: any
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, id, 'truth.json'), 'utf8')) as {properties: Record<string, number>; stats: string}
  const p = truth.properties
  const part = (prefix: string) => {
    const l = report.accounting.heap.parts.find((x: Line) => x.part.startsWith(prefix))
    expect(l, prefix).toBeDefined()
    return l.bytes as number
  }

  beforeAll(async () => {
    work = testTemp('toma-memory-gtc-')
    const core = await sparseBrotliCorePath(path.join(DIR, id, 'core.br'))
    const m = await runToma(['memory', core, '--exe', path.join(DIR, id, 'gtcdemo'), '--debug-file-directory', DEBUG_DIR, '--index', path.join(work, 'x.toma-index'), '--json', '--examples', '0'], {cwd: work})
    expect(m.status, m.stderr).toBe(0)
    report = JSON.parse(m.stdout)
  }, 180_000)
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('accounts for every byte of the writable mappings once, with no remainder', () => {
    const a = report.accounting
    expect(a.lines.reduce((n: number, l: Line) => n + l.bytes, 0) + a.remainder).toBe(a.mapped.bytes)
    expect(a.remainder).toBe(0)
    expect(a.heap.outsideSegments).toBe(0)
    // google/tcmalloc's heap_size leaves out the pages returned to the system; its spans hold them.
    expect(a.lines[0].bytes).toBe(p['generic.heap_size']! + p['tcmalloc.page_heap_unmapped']!)
    expect(a.heap.bytes).toBe(a.lines[0].bytes)
  })

  it('splits the heap into parts that add up to its spans, each the property the process gave for it', () => {
    const h = report.accounting.heap
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
    for (const c of report.fragmentation.classes) {
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
    const sum = (k: string) => report.fragmentation.classes.reduce((n: number, c: any) => n + c.freeBytes[k], 0)
    expect(sum('threadCaches')).toBe(p['tcmalloc.cpu_free']! + p['tcmalloc.thread_cache_free']!)
    expect(sum('transfer')).toBe(p['tcmalloc.transfer_cache_free']! + p['tcmalloc.sharded_transfer_cache_free']!)
    expect(sum('central') + part('span tail waste')).toBe(p['tcmalloc.central_cache_free'])
  })

  it('holds each span\'s slots as the central free list does: its span utilization histogram, class by class', () => {
    // The histogram counts every span of a class by its objects handed out (live, or in a cache):
    // all but those on the span's own free list.
    const stats = readStats(truth.stats)
    const index = HeapIndex.open(path.join(work, 'x.toma-index'))!
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

  it('says in text which CPU\'s or thread\'s cache holds free objects of nearly empty spans', async () => {
    const t = await runToma(['memory', path.join(work, 'x.toma-index')], {cwd: work})
    expect(t.status, t.stderr).toBe(0)
    expect(t.stdout).toMatch(/^remainder \(no line explains it\)\s+0\s/m)
    const holders = report.fragmentation.cachePins.map((c: {cpu: number | null; tid: number | null}) => (c.cpu !== null ? `CPU ${c.cpu}` : c.tid === null ? '\\?' : String(c.tid)))
    expect(holders.length).toBeGreaterThan(0)
    if (p['tcmalloc.per_cpu_caches_active']) expect(holders.every((h: string) => h.startsWith('CPU '))).toBe(true)
    for (const h of holders) expect(t.stdout).toMatch(new RegExp(`^\\s*${h}\\s+0x`, 'm'))
  })
})
