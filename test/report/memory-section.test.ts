import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {FRAGDEMO_DIR, FRAGDEMO_TCMALLOC, fragTruth as truth, survivorSpans, writableMappings} from '../helpers/fragdemo-truth.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 53: `toma report`'s section "Where the memory went", on the core that fragmented its heap on
// purpose (fixtures/fragdemo). Read from the page's markup: the numbers are each cell's data-v and
// each picture's data attributes; every expected value is what the process recorded about itself.

/** A table's rows of the page: per row, each cell's exact number (data-v) or its text. */
function tableRows(page: string, id: string): Array<Array<number | string>> {
  const body = page.match(new RegExp(`<table id="${id}"[^]*?<tbody>([^]*?)</tbody>`))
  expect(body, id).not.toBeNull()
  return [...body![1]!.matchAll(/<tr>([^]*?)<\/tr>/g)].map(r =>
    [...r[1]!.matchAll(/<td[^>]*?(?: data-v="([^"]*)")?>([^]*?)<\/td>/g)].map(c => (c[1] !== undefined ? Number(c[1]) : c[2]!)),
  )
}

describe('toma report: where the memory went (fragdemo)', () => {
  let work: string
  let page: string
  let section: string

  beforeAll(async () => {
    work = testTemp('toma-report-memory-')
    const core = await brotliCorePath(path.join(FRAGDEMO_DIR, 'core.br'))
    const out = path.join(work, 'report.html')
    const r = await runToma(['report', core, '--exe', path.join(FRAGDEMO_DIR, 'fragdemo'), '--tcmalloc', FRAGDEMO_TCMALLOC, '--index', path.join(work, 'core.toma-index'), '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    page = fs.readFileSync(out, 'utf8')
    section = page.slice(page.indexOf('<section id="section-memory"'), page.indexOf('</section>', page.indexOf('<section id="section-memory"')))
  }, 180_000)
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('has the section, linked from the navigation', () => {
    expect(section.length).toBeGreaterThan(1000)
    expect(page).toContain('href="#section-memory"')
  })

  it('lists every byte of the writable mappings once, as smaps maps them, the heap as the allocator counts it', () => {
    const rows = tableRows(section, 'memory-lines')
    const mapped = writableMappings(truth.smaps).reduce((n, m) => n + m.end - m.start, 0)
    expect(rows.reduce((n, r) => n + (r[1] as number), 0)).toBe(mapped)
    expect(rows.at(-1)![0]).toMatch(/^remainder/)
    expect(rows.at(-1)![1]).toBe(0)
    expect(rows[0]![1]).toBe(truth.properties['generic.heap_size'])
    const heap = new Map(tableRows(section, 'memory-heap').map(r => [r[0] as string, r[1] as number]))
    expect(heap.get('live (in use by the application)')).toBe(truth.properties['generic.current_allocated_bytes'])
    expect(heap.get('free in thread caches')).toBe(truth.properties['tcmalloc.thread_cache_free_bytes'])
    expect(heap.get('page heap free (normal)')).toBe(truth.properties['tcmalloc.pageheap_free_bytes'])
    expect([...heap.values()].reduce((a, b) => a + b, 0)).toBe(truth.properties['generic.heap_size'])
  })

  it('draws the mapped bytes as a treemap whose boxes add up to the mappings, the heap\'s to the heap', () => {
    const svg = section.match(/<svg id="memory-treemap"[^]*?<\/svg>/)![0]
    const boxes = [...svg.matchAll(/<rect class="box" data-bytes="(\d+)"/g)].map(m => Number(m[1]))
    expect(boxes.reduce((a, b) => a + b, 0)).toBe(writableMappings(truth.smaps).reduce((n, m) => n + m.end - m.start, 0))
    const groups = [...svg.matchAll(/<rect class="group" data-bytes="(\d+)"[^>]*><title>([^<]*)<\/title>/g)]
    const heap = groups.find(g => g[2]!.startsWith("heap (the allocator&#39;s spans)"))
    expect(Number(heap![1])).toBe(truth.properties['generic.heap_size'])
  })

  for (const type of ['Tick', 'Order', 'Session']) {
    it(`draws ${type}'s class as the process's spans by share live`, () => {
      const {size, histogram} = survivorSpans(type)
      const row = tableRows(section, 'memory-classes').find(r => r[1] === size)!
      const sizeClass = row[0] as number
      // Spans with no live object (kept by cached free objects) are in the first bucket, as the table's "empty" says.
      histogram[0]! += row[6] as number
      const svg = section.match(new RegExp(`<svg class="occupancy" data-class="${sizeClass}"[^]*?</svg>`))![0]
      expect([...svg.matchAll(/data-bucket="(\d)" data-spans="(\d+)"/g)].map(m => Number(m[2]))).toEqual(histogram)
      expect(histogram.reduce((a, b) => a + b, 0)).toBeGreaterThan(50)
    })
  }
})
