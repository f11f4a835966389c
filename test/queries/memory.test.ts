import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {LIVE, THREAD_CACHE, TRANSFER_CACHE} from '../../src/heap/states.js'
import {statsFreeObjects, statsFreeRuns, tomaFreeObjects, tomaFreeRuns} from '../helpers/get-stats.js'
import {FRAGDEMO_DIR, FRAGDEMO_PAGE, FRAGDEMO_TCMALLOC, fragTruth, survivorSpans, writableMappings} from '../helpers/fragdemo-truth.js'

// Issue 53: `toma memory` on a process that fragmented its heap on purpose (fixtures/fragdemo/README.md).
// Every expected value is what the process recorded about itself once its heap was still:
// MallocExtension's properties, GetStats' text, Ranges (every span) and /proc/self/smaps.

const DIR = FRAGDEMO_DIR
const TCMALLOC = FRAGDEMO_TCMALLOC
const PAGE = FRAGDEMO_PAGE
const truth = fragTruth

interface Line {
  part: string
  bytes: number
  allocator?: {property: string; bytes: number}
}

describe('toma memory (fragdemo)', () => {
  let work: string
  let report: any

  beforeAll(async () => {
    work = testTemp('toma-memory-')
    const index = path.join(work, 'core.toma-index')
    const core = await brotliCorePath(path.join(DIR, 'core.br'))
    const a = await runToma(['analyze', core, '--exe', path.join(DIR, 'fragdemo'), '--tcmalloc', TCMALLOC, '--index', index], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
    const m = await runToma(['memory', index, '--json', '--examples', '100000', '--rows', '100000'], {cwd: work})
    expect(m.status, m.stderr).toBe(0)
    report = JSON.parse(m.stdout)
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('accounts for every byte of the writable mappings once: the lines add up to what smaps maps, with no remainder', () => {
    const maps = writableMappings(truth.smaps)
    const a = report.accounting
    expect(a.mapped.mappings).toBe(maps.length)
    expect(a.mapped.bytes).toBe(maps.reduce((n, x) => n + x.end - x.start, 0))
    expect(a.lines.reduce((n: number, l: Line) => n + l.bytes, 0) + a.remainder).toBe(a.mapped.bytes)
    expect(a.remainder).toBe(0)
    expect(a.heap.outsideSegments).toBe(0)
    // gcore dumps every writable mapping whole: every byte is in the core file, line by line.
    expect(a.mapped.inCore).toBe(a.mapped.bytes)
    for (const l of a.lines) expect(l.inCore, l.part).toBe(l.bytes)
    // The worker's stack is its mapping, as smaps has it; the part above its stack pointer is in use.
    const worker = a.stacks.find((s: {tid: number}) => s.tid === truth.workerTid)
    const [start, end] = worker.mapping.split('-').map((x: string) => Number(x))
    expect(maps.some(x => x.start === start && x.end === end)).toBe(true)
    expect(worker.bytes).toBe(end - start)
    expect(worker.aboveSp).toBeGreaterThan(0)
    expect(worker.aboveSp).toBeLessThan(worker.bytes)
  })

  it('splits the heap into parts that add up to its spans and equal the allocator\'s counters, as the process read them', () => {
    const h = report.accounting.heap
    const part = (p: string) => h.parts.find((l: Line) => l.part.startsWith(p)).bytes
    const p = truth.properties
    expect(h.bytes).toBe(p['generic.heap_size'])
    expect(h.parts.reduce((n: number, l: Line) => n + l.bytes, 0)).toBe(h.bytes)
    expect(part('live')).toBe(p['generic.current_allocated_bytes'])
    expect(part('free in thread caches')).toBe(p['tcmalloc.thread_cache_free_bytes'])
    expect(part('free in the transfer cache')).toBe(p['tcmalloc.transfer_cache_free_bytes'])
    // TCMalloc counts the spans' own free lists and their tail waste as one figure.
    expect(part('free in central lists') + part('span tail waste')).toBe(p['tcmalloc.central_cache_free_bytes'])
    expect(part('page heap free')).toBe(p['tcmalloc.pageheap_free_bytes'])
    expect(part('page heap returned')).toBe(p['tcmalloc.pageheap_unmapped_bytes'])
    expect(report.accounting.lines[0].bytes).toBe(p['generic.heap_size'])
  })

  it('tells where each class\'s free bytes are, adding up to the allocator\'s counters of each place', () => {
    const sum = (k: string) => report.fragmentation.classes.reduce((n: number, c: any) => n + c.freeBytes[k], 0)
    const waste = report.accounting.heap.parts.find((l: Line) => l.part.startsWith('span tail waste')).bytes
    expect(sum('threadCaches')).toBe(truth.properties['tcmalloc.thread_cache_free_bytes'])
    expect(sum('transfer')).toBe(truth.properties['tcmalloc.transfer_cache_free_bytes'])
    expect(sum('central') + waste).toBe(truth.properties['tcmalloc.central_cache_free_bytes'])
  })

  it('counts the modules\' data as smaps maps it: their writable file mappings and the .bss right after each', () => {
    const maps = writableMappings(truth.smaps)
    const module = (m: {name: string}) => m.name.startsWith('/')
    let bytes = 0
    maps.forEach((m, i) => {
      const prev = maps[i - 1]
      if (module(m) || (m.name === '' && prev && module(prev) && prev.end === m.start)) bytes += m.end - m.start
    })
    const a = report.accounting
    expect(a.lines.find((l: Line) => l.part.startsWith('modules')).bytes + a.metadataIn.modules).toBe(bytes)
  })

  it('counts the free objects of each size class as GetStats lists them', () => {
    expect(tomaFreeObjects(report.fragmentation.classes)).toEqual(statsFreeObjects(truth.stats))
  })

  for (const type of ['Tick', 'Order', 'Session']) {
    it(`${type}: its spans' occupancy, its pinned spans and its survivors are the process's`, () => {
      // Survivors per span (the span from Ranges): every survivor's span is pinned, and no other live object is in it.
      const {survivors, size, perSpan, histogram} = survivorSpans(type)
      const c = report.fragmentation.classes.find((x: any) => x.size === size)
      expect(c.liveObjects).toBe(survivors.length)
      expect(c.spans - c.emptySpans).toBe(perSpan.size)
      const slots = Math.floor(PAGE / size)
      expect(c.objectsPerSpan).toBe(slots)
      histogram[0]! += c.emptySpans
      expect(c.occupancy).toEqual(histogram)
      const pinned = [...perSpan.values()].filter(e => e.n <= 0.1 * Math.floor(e.length / size))
      expect(c.pinned.spans).toBe(pinned.length)
      expect(c.pinned.bytes).toBe(pinned.reduce((n, e) => n + e.length, 0))
      // The pinning group of the type holds exactly the survivors, and freeing them returns their spans.
      const g = report.fragmentation.pinners.find((x: any) => x.name === type)
      expect(new Set(g.addresses.map((a: string) => BigInt(a)))).toEqual(new Set(survivors.map(s => BigInt(s.address))))
      expect(g.objects).toBe(survivors.length)
      expect(g.bytes).toBe(survivors.length * size)
      expect(g.spansAlone).toBe(pinned.length)
      expect(g.bytesReturned).toBe(c.pinned.bytes)
    })
  }

  it('reads every span the process listed (Ranges) with its state, and each small span\'s objects handed out as its refcount', () => {
    const index = HeapIndex.open(path.join(work, 'core.toma-index'))!
    try {
      const byStart = new Map<number, number>()
      for (let s = 0; s < index.spanStart.length; s++) byStart.set(index.spanStart[s]!, s)
      expect(index.spanStart.length).toBe(truth.ranges.length)
      // Handed out by the span (TCMalloc's refcount): live, or in a thread or the transfer cache.
      const handedOut = new Map<number, number>()
      index.objects.forEachObject((id, _start, _size, span) => {
        const st = index.objects.state[id]
        if (st === LIVE || st === THREAD_CACHE || st === TRANSFER_CACHE) handedOut.set(span, (handedOut.get(span) ?? 0) + 1)
      })
      let small = 0
      for (const r of truth.ranges) {
        const s = byStart.get(Number(r.address))!
        expect(s, r.address).toBeDefined()
        expect(index.spanPages[s]! * PAGE).toBe(r.length)
        expect(['INUSE', 'FREE', 'UNMAPPED'][index.spanLocation[s]!]).toBe(r.type)
        if (r.type !== 'INUSE' || index.spanSizeClass[s] === 0) continue
        // Ranges gives fraction = size × refcount / length (gperftools' tcmalloc.cc).
        expect(handedOut.get(s) ?? 0, r.address).toBe(Math.round((r.fraction * r.length) / index.spanObjectSize[s]!))
        small++
      }
      expect(small).toBeGreaterThan(800)
    } finally {
      index.close()
    }
  })

  it('says it in text too: the lines with their bytes, the remainder, the pinning names', async () => {
    const t = await runToma(['memory', path.join(work, 'core.toma-index')], {cwd: work})
    expect(t.status, t.stderr).toBe(0)
    const heapLine = t.stdout.split('\n').find(l => l.startsWith('heap (the allocator\'s spans)'))!
    expect(heapLine.replace(/,/g, '')).toContain(String(truth.properties['generic.heap_size']))
    expect(t.stdout).toMatch(/^remainder \(no line explains it\)\s+0\s/m)
    for (const type of ['Tick', 'Order', 'Session']) expect(t.stdout).toMatch(new RegExp(`\\s${type}\\s*$`, 'm'))
  })

  it('names the worker whose cache holds free objects of pinned spans, with the bytes its cache holds', () => {
    const w = report.fragmentation.cachePins.find((c: {tid: number}) => c.tid === truth.workerTid)
    expect(w.bytes).toBe(truth.workerCacheBytes)
  })

  it('gives the page heap\'s free runs as Ranges and GetStats do: by length, normal and returned, and the largest', () => {
    const p = report.pageHeap
    const fromRanges = new Map<number, {normal: number; returned: number}>()
    for (const r of truth.ranges) {
      if (r.type !== 'FREE' && r.type !== 'UNMAPPED') continue
      const e = fromRanges.get(r.length / PAGE) ?? {normal: 0, returned: 0}
      if (r.type === 'FREE') e.normal++
      else e.returned++
      fromRanges.set(r.length / PAGE, e)
    }
    expect(new Map(p.runs.map((x: any) => [x.pages, {normal: x.normal, returned: x.returned}]))).toEqual(fromRanges)
    expect(tomaFreeRuns(p.runs)).toEqual(statsFreeRuns(truth.stats))
    expect(p.normalBytes).toBe(truth.properties['tcmalloc.pageheap_free_bytes'])
    expect(p.returnedBytes).toBe(truth.properties['tcmalloc.pageheap_unmapped_bytes'])
    expect(p.largestServableBytes).toBe(Math.max(...truth.ranges.filter(r => r.type === 'FREE' || r.type === 'UNMAPPED').map(r => r.length)))
  })

  it('lists the live blocks that split free runs, with the run freeing each would make: the odd large blocks and every in-use span Ranges puts between two free runs', () => {
    // Ranges lists every span in address order: an in-use one with free spans right before and after splits them.
    type Range = (typeof truth.ranges)[number]
    const ranges = [...truth.ranges].sort((a, b) => Number(a.address) - Number(b.address))
    const isFree = (r: Range) => r.type === 'FREE' || r.type === 'UNMAPPED'
    const adjacent = (a: Range, b: Range) => Number(a.address) + a.length === Number(b.address)
    const expected = new Map<number, {pages: number; before: Range; after: Range}>()
    for (let k = 1; k + 1 < ranges.length; k++) {
      const [before, r, after] = [ranges[k - 1]!, ranges[k]!, ranges[k + 1]!]
      if (r.type === 'INUSE' && isFree(before) && isFree(after) && adjacent(before, r) && adjacent(r, after)) expected.set(Number(r.address), {pages: r.length / PAGE, before, after})
    }
    const s = report.splitters
    expect(s.count).toBe(expected.size)
    expect(new Set(s.spans.map((x: any) => Number(x.address)))).toEqual(new Set(expected.keys()))
    const list = (r: Range) => (r.type === 'FREE' ? 'normal' : 'returned')
    for (const x of s.spans) {
      const e = expected.get(Number(x.address))!
      expect(x.pages).toBe(e.pages)
      expect(x.before).toEqual({pages: e.before.length / PAGE, list: list(e.before)})
      expect(x.after).toEqual({pages: e.after.length / PAGE, list: list(e.after)})
      // gperftools 2.10: the freed span goes on the normal list and joins normal neighbours only.
      expect(x.joinedPages).toBe(e.pages + [e.before, e.after].reduce((n, r) => n + (r.type === 'FREE' ? r.length / PAGE : 0), 0))
      expect(x.stretchPages).toBe((e.before.length + e.pages * PAGE + e.after.length) / PAGE)
    }
    for (let k = 1; k < s.spans.length; k++) expect(s.spans[k - 1].joinedPages).toBeGreaterThanOrEqual(s.spans[k].joinedPages)
    // The program's 16 blocks of 40 + 2i pages, the even ones freed: every live (odd) one splits free runs,
    // and between two live ones lies the freed even block of 40 + 2i pages.
    const large = truth.large.map(b => ({address: Number(b.address), pages: b.size / PAGE})).sort((a, b) => a.address - b.address)
    expect(large.map(b => b.pages)).toEqual(large.map((_, k) => 40 + 2 * (2 * k + 1)))
    for (const [k, b] of large.entries()) {
      const x = s.spans.find((y: any) => Number(y.address) === b.address)
      expect(x, `large block ${k}`).toBeDefined()
      expect(x.pages).toBe(b.pages)
      if (k > 0) expect(x.before.pages).toBe((b.address - large[k - 1]!.address) / PAGE - large[k - 1]!.pages)
      if (k > 0) expect(x.before.pages).toBe(40 + 2 * (2 * k))
      if (k + 1 < large.length) expect(x.after.pages).toBe(40 + 2 * (2 * k + 2))
      expect(x.stretchPages).toBe(b.pages + x.before.pages + x.after.pages)
    }
  })
})
