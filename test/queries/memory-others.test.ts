import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {brotliCorePath, FIXTURES, sysrootOf} from '../helpers/fixture-core.js'
import {statsFreeObjects, statsFreeRuns, tomaFreeObjects, tomaFreeRuns} from '../helpers/get-stats.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 53: `toma memory` on cores not made for it: the demo (heapdemo, fixtures/demo) and a real
// program of others (gpsusi, fixtures/programs-of-others). Their truth is what TCMalloc answered in
// the process (its numeric properties and GetStats' text, recorded by the process or by gdb).

const FIXTURE_ROOT = fileURLToPath(new URL('../../fixtures', import.meta.url))

interface Case {
  name: string
  dir: string
  exe: string
  tcmalloc: string
}

const CASES: Case[] = [
  {name: 'demo', dir: path.join(FIXTURE_ROOT, 'demo'), exe: 'heapdemo', tcmalloc: path.join(FIXTURE_ROOT, 'demo', 'libtcmalloc.so.4')},
  {name: 'gpsusi', dir: path.join(FIXTURE_ROOT, 'programs-of-others', 'gpsusi-2.10'), exe: 'gpsusi', tcmalloc: path.join(FIXTURES, 'v2.10-minimal', 'libtcmalloc_minimal.so.4')},
]

const PROPERTY_OF: Record<string, string> = {
  live: 'generic.current_allocated_bytes',
  'free in thread caches': 'tcmalloc.thread_cache_free_bytes',
  'free in the transfer cache': 'tcmalloc.transfer_cache_free_bytes',
  'page heap free': 'tcmalloc.pageheap_free_bytes',
  'page heap returned': 'tcmalloc.pageheap_unmapped_bytes',
}

for (const c of CASES) {
  describe(`toma memory (${c.name})`, () => {
    let work: string
    let report: any
    const truth = JSON.parse(fs.readFileSync(path.join(c.dir, 'truth.json'), 'utf8')) as {counters: Record<string, number>; stats: string}

    beforeAll(async () => {
      work = testTemp('toma-memory-')
      const core = await brotliCorePath(path.join(c.dir, 'core.br'))
      const sysroot = await sysrootOf(path.join(c.dir, 'core.br'), Core.open(core))
      const m = await runToma(['memory', core, '--exe', path.join(c.dir, c.exe), '--tcmalloc', c.tcmalloc, ...(sysroot ? ['--sysroot', sysroot] : []), '--index', path.join(work, 'x.toma-index'), '--json'], {cwd: work})
      expect(m.status, m.stderr).toBe(0)
      report = JSON.parse(m.stdout)
    })
    afterAll(() => {
      if (work) fs.rmSync(work, {recursive: true, force: true})
    })

    it('accounts for every byte of the writable mappings once, with no remainder', () => {
      const a = report.accounting
      expect(a.lines.reduce((n: number, l: {bytes: number}) => n + l.bytes, 0) + a.remainder).toBe(a.mapped.bytes)
      expect(a.remainder).toBe(0)
      expect(a.heap.outsideSegments).toBe(0)
    })

    it('splits the heap into parts that add up to its spans and equal TCMalloc\'s counters', () => {
      const h = report.accounting.heap
      const part = (p: string) => h.parts.find((l: {part: string}) => l.part.startsWith(p)).bytes
      expect(h.bytes).toBe(truth.counters['generic.heap_size'])
      expect(h.parts.reduce((n: number, l: {bytes: number}) => n + l.bytes, 0)).toBe(h.bytes)
      for (const [p, property] of Object.entries(PROPERTY_OF)) expect(part(p), p).toBe(truth.counters[property])
      expect(part('free in central lists') + part('span tail waste')).toBe(truth.counters['tcmalloc.central_cache_free_bytes'])
    })

    it('counts free objects per class and the page heap\'s free runs as GetStats lists them', () => {
      expect(tomaFreeObjects(report.fragmentation.classes)).toEqual(statsFreeObjects(truth.stats))
      expect(tomaFreeRuns(report.pageHeap.runs)).toEqual(statsFreeRuns(truth.stats))
    })
  })
}
