import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {THREAD_CACHE} from '../../src/heap/states.js'
import {heapObjects} from '../../src/heap/objects.js'
import {addr, brotliCorePath, FIXTURES} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {IndexFile} from '../../src/index/index-file.js'
import {testTemp} from '../helpers/test-temp.js'

/**
 * The crash fixtures (fixtures/crashes/README.md): real cores of crashdemo damaging its own heap,
 * each with what the process recorded before the damaging act and what gdb saw at the signal.
 * toma must open every one, name the damaged structure by its address with the value exactly,
 * name the culprit where the process recorded one, and stay exact elsewhere.
 */
const CRASHES = fileURLToPath(new URL('../../fixtures/crashes', import.meta.url))
const EXE = path.join(CRASHES, 'crashdemo')
const TCMALLOC = path.join(FIXTURES, 'v2.10-minimal', 'libtcmalloc_minimal.so.4')
const temp = testTemp('toma-crashes-')

interface CrashTruth {
  case: string
  counters: Record<string, number>
  threads: Array<{tid: number; role: string; threadCache: string}>
  damage: Record<string, unknown> & {list?: {threadCache: string; listAddress: string; sizeClass: number; tid: number}}
  crash?: {signo: number; tid: number; signal: string}
  core: {list?: {address: string; head: string; length: number}; words: Record<string, string>; pageheapLock: {address: string; value: number}}
}

type Damage = {
  findings: Array<{
    kind: string
    structure: string
    structureAddress: string
    slot: string
    value: string
    entry: string | null
    objectsBehind: number
    recovered: number
    inFlight: boolean
    valueMeans: string | null
    culprit: {address: string; type: string | null; state: string; bytesPastEnd: number | null} | null
    pointedBy: Array<{address: string; type: string | null; offset: number}>
    inside: {address: string; offset: number; type: string | null; state: string} | null
  }>
  crash: {tid: number; signalName: string; inAllocator: boolean; frames: string[]; following: {value: string} | null} | null
  threadsInAllocator: Array<{tid: number; frames: string[]}>
  locks: Array<{address: string; word: number; sizeClass: number | null}>
  unknownBehindDamage: {objects: number; bytes: number}
}

const truthOf = (id: string) => JSON.parse(fs.readFileSync(path.join(CRASHES, id, 'truth.json'), 'utf8')) as CrashTruth
const cores = new Map<string, string>()
const damages = new Map<string, Damage>()

beforeAll(async () => {
  for (const id of fs.readdirSync(CRASHES).filter(d => fs.existsSync(path.join(CRASHES, d, 'core.br')))) {
    const core = await brotliCorePath(path.join(CRASHES, id, 'core.br'))
    cores.set(id, core)
    const r = await runToma(['damage', core, '--exe', EXE, '--tcmalloc', TCMALLOC, '--index', path.join(temp, `${id}.toma-index`), '--json'])
    // No refusal, no internal error: every crashed heap is analysed.
    expect({id, status: r.status, stderr: r.stderr.split('\n').filter(l => !l.startsWith('toma: no index'))}).toEqual({id, status: 0, stderr: ['']})
    damages.set(id, JSON.parse(r.stdout) as Damage)
  }
}, 600_000)

afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

/** The one finding on the list the process damaged. */
function listFinding(id: string) {
  const t = truthOf(id)
  const found = damages.get(id)!.findings.filter(f => f.structureAddress === t.damage.list!.listAddress)
  expect(found).toHaveLength(1)
  expect(found[0]!.structure).toContain(`thread cache ${t.damage.list!.threadCache}`)
  expect(found[0]!.structure).toContain(`class ${t.damage.list!.sizeClass} list`)
  return found[0]!
}

/** The free objects the list really held behind the bad link: the process recorded the old link; the objects' own links are intact from there. */
function trueTail(core: Core, from: string): Set<number> {
  const tail = new Set<number>()
  for (let p = addr(from); p !== 0 && tail.size < 1000; p = core.memory.readU64(p)!) tail.add(p)
  return tail
}

describe('crashed and corrupted heaps', () => {
  it('every case is there: overflow, use after free (before and at the crash), double free, invalid frees, a page-heap crash', () => {
    expect([...cores.keys()].sort()).toEqual(['double-free', 'double-free-crash', 'double-free-listed', 'invalid-free-interior', 'invalid-free-stack', 'overflow', 'pageheap-crash', 'uaf-before', 'uaf-crash'])
  })

  it('overflow: the overwritten link exactly, its text, the culprit and its type, the crashing thread following it', async () => {
    const t = truthOf('overflow')
    const f = listFinding('overflow')
    expect(f.kind).toBe('overwritten-link')
    // The head holds the link TCMalloc copied from the victim when it handed it out: all 64 bits.
    expect(f.value).toBe(t.damage.linkAfter)
    expect(f.value).toBe(t.core.list!.head)
    expect(f.objectsBehind).toBe(t.core.list!.length)
    expect(f.culprit).toMatchObject({address: t.damage.culprit, type: t.damage.culpritClass, state: 'live'})
    // How far the write went is told from the bytes left in the victim: never more than it went.
    expect(f.culprit!.bytesPastEnd).toBeGreaterThanOrEqual(8)
    expect(f.culprit!.bytesPastEnd).toBeLessThanOrEqual(t.damage.bytesPastUsable as number)
    // The objects behind the bad link that stay counted live are said by leaks too, never silently.
    const leaks = await runToma(['leaks', cores.get('overflow')!, '--index', path.join(temp, 'overflow.toma-index'), '--json'])
    const lost = f.objectsBehind - f.recovered
    expect(JSON.parse(leaks.stdout).damageNote).toMatch(new RegExp(`^${lost} free objects .* counted live`))
    const crash = damages.get('overflow')!.crash!
    expect(crash).toMatchObject({tid: t.crash!.tid, signalName: 'SIGSEGV', inAllocator: true})
    expect(crash.following!.value).toBe(t.damage.linkAfter)
  })

  it('use after free: the written link, the live object still pointing at the freed one (the writer), and only true free objects recovered', async () => {
    for (const id of ['uaf-before', 'uaf-crash']) {
      const t = truthOf(id)
      const f = listFinding(id)
      expect(f.kind).toBe('overwritten-link')
      expect(f.value).toBe(t.damage.linkAfter)
      expect(f.objectsBehind).toBe(t.core.list!.length - (id === 'uaf-before' ? 1 : 0))
      const holder = t.damage.holder as {address: string; class: string; fieldOffset: number}
      if (id === 'uaf-before') {
        // Before the crash the freed object is still on the list: its holder is named.
        expect(f.entry).toBe(t.damage.freed)
        expect(f.pointedBy).toContainEqual(expect.objectContaining({address: holder.address, type: holder.class, offset: holder.fieldOffset}))
      }
      // Objects found again behind the bad link are all on the list the process had (from its old link on).
      const core = Core.open(cores.get(id)!)
      const heap = analyzeHeap(Program.load(core, {exe: EXE, tcmalloc: TCMALLOC}))
      const tail = trueTail(core, t.damage.linkBefore as string)
      const objects = heapObjects(heap)
      const cache = heap.threadCaches.findIndex(c => c.address === addr(t.damage.list!.threadCache))
      let recovered = 0
      objects.forEachObject((id, start, _size, span) => {
        const onList = heap.spans.sizeClass[span] === t.damage.list!.sizeClass && heap.threadCacheOwner[heap.threadCacheObjects.indexOf(id)] === cache
        if (onList && start !== addr(t.damage.freed as string)) {
          expect(tail.has(start)).toBe(true)
          recovered++
        }
      }, THREAD_CACHE)
      expect(recovered).toBe(f.recovered)
      core.close()
    }
    expect(damages.get('uaf-crash')!.crash).toMatchObject({signalName: 'SIGSEGV', inAllocator: true, following: {value: truthOf('uaf-crash').damage.linkAfter}})
    expect(damages.get('uaf-before')!.crash).toBeNull()
  })

  it('double free: the head holds what the first owner wrote over the object handed out twice; both owners hold it', async () => {
    for (const id of ['double-free', 'double-free-crash']) {
      const t = truthOf(id)
      const f = listFinding(id)
      expect(f.value).toBe(t.damage.listHeadAfterAlloc2)
      expect(f.objectsBehind).toBe(t.core.list!.length)
      // The object given to two owners: toma refs lists both as its referrers.
      const owners = t.damage.owners as Array<{address: string; fieldOffset: number}>
      const r = await runToma(['refs', t.damage.address as string, cores.get(id)!, '--index', path.join(temp, `${id}.toma-index`), '--json'])
      expect(r.status).toBe(0)
      const incoming = JSON.parse(r.stdout).incoming as Array<{from: {address: string}; offset: number}>
      for (const o of owners) expect(incoming).toContainEqual(expect.objectContaining({from: expect.objectContaining({address: o.address}), offset: o.fieldOffset}))
    }
  })

  it('double free still on the list: the object reached twice, its link to itself, and the objects its first push linked to found again', () => {
    const t = truthOf('double-free-listed')
    const f = listFinding('double-free-listed')
    expect(f.kind).toBe('on-a-list-twice')
    expect(f.entry).toBe(t.damage.address)
    expect(f.value).toBe(t.damage.address)
    expect(f.valueMeans).toMatch(/links to itself: pushed twice in a row, freed twice/)
    // length_ counts the object twice: every entry past its first visit is behind the self-link.
    expect(f.objectsBehind).toBe(t.core.list!.length - 1)
  })

  it('interior free: the entry inside a live object is named with its object, and the rest of the list is walked', () => {
    const t = truthOf('invalid-free-interior')
    const f = listFinding('invalid-free-interior')
    expect(f.kind).toBe('entry-not-object-start')
    expect(f.value).toBe(t.damage.pointerFreed)
    expect(f.inside).toMatchObject({address: t.damage.object, offset: t.damage.offsetInObject, type: t.damage.objectClass, state: 'live'})
    expect(f.objectsBehind).toBe(0)
  })

  it('a free of a stack address: TCMalloc aborts; the heap is intact and says so, the crash is named', () => {
    const d = damages.get('invalid-free-stack')!
    expect(d.findings).toEqual([])
    expect(d.crash).toMatchObject({signalName: 'SIGABRT', inAllocator: true, tid: truthOf('invalid-free-stack').crash!.tid})
  })

  it('page-heap crash: opened though its stats went below zero and its list is half linked; the held lock and the crashing frames are named', () => {
    const t = truthOf('pageheap-crash')
    const d = damages.get('pageheap-crash')!
    expect(d.locks).toContainEqual(expect.objectContaining({address: t.core.pageheapLock.address, word: t.core.pageheapLock.value, sizeClass: null}))
    expect(d.crash).toMatchObject({signalName: 'SIGSEGV', inAllocator: true})
    expect(d.crash!.frames[0]).toMatch(/DLL_Remove/)
    expect(d.crash!.frames.some(fr => /PageHeap::Carve/.test(fr))).toBe(true)
    const head = d.findings.find(f => f.kind === 'half-linked-list')!
    expect(head.value).toBe((t.damage as {afterRealloc: {headNext: string}}).afterRealloc.headNext)
    expect(head.inFlight).toBe(true)
    // unmapped_bytes went below zero: shown as the negative count it is, and as damage, not in flight.
    const stats = d.findings.find(f => f.kind === 'counter-disagrees')!
    expect(stats.value).toBe('0xfffffffffff00000')
    expect(stats.inFlight).toBe(false)
  })

  it('the HTML report gains the same section: the damaged list, its exact value, the culprit (the text from the core escaped)', async () => {
    const out = path.join(temp, 'overflow.html')
    const r = await runToma(['report', cores.get('overflow')!, '--exe', EXE, '--tcmalloc', TCMALLOC, '--index', path.join(temp, 'overflow.toma-index'), '-o', out])
    expect(r.status).toBe(0)
    const html = fs.readFileSync(out, 'utf8')
    const t = truthOf('overflow')
    expect(html).toContain('id="section-damage"')
    expect(html).toContain(`slot ${t.damage.list!.listAddress} holds ${t.damage.linkAfter}`)
    expect(html).toContain(`likely culprit: the live ${t.damage.culpritClass} at ${t.damage.culprit}`)
    expect(html).toContain('&quot;\\x0d\\x0aX-Trac&quot;')
  })

  it('every other figure stays exact: the cross-check figures the damage does not touch equal the process\'s counters', async () => {
    let checked = 0
    for (const id of cores.keys()) {
      const t = truthOf(id)
      if (id === 'pageheap-crash' || id === 'double-free') continue // counters recorded before the last steps
      // What analyze --json prints is this summary, stored in the index beforeAll's damage made: read, not made again.
      const index = IndexFile.open(path.join(temp, `${id}.toma-index`))!
      const s = (index.meta as {summary: {damage: {touchedFigures: unknown}; crossCheck: unknown}}).summary
      index.close()
      const touched = new Set((s.damage.touchedFigures as Array<{property: string}>).map(x => x.property))
      for (const c of s.crossCheck as Array<{property: string; toma: number; tcmalloc: number}>) {
        if (touched.has(c.property) || !(c.property in t.counters)) continue
        expect({id, property: c.property, toma: c.toma}).toEqual({id, property: c.property, toma: c.tcmalloc})
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10)
  })
})
