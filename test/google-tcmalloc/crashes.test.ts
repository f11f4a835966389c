import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {analyzeGoogleHeap, type GoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {objectAt} from '../../src/heap/objects.js'
import {CENTRAL_CACHE, LIVE, PAGE_HEAP, THREAD_CACHE, TRANSFER_CACHE} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import type {HeapDamage} from '../../src/queries/heap-damage.js'
import {addr, sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

/**
 * The google/tcmalloc crash fixtures (fixtures/google-tcmalloc-crashes/README.md): real cores of
 * gtccrash damaging its own heap, each with what the process recorded and, for the crash, what gdb
 * saw at the signal. toma must name the damaged structure by its address with the value exactly,
 * name the culprit where the process recorded one, and keep every other figure exact.
 */
const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc-crashes', import.meta.url))
const EXE = path.join(DIR, 'gtccrash')
const temp = testTemp('toma-gtc-crashes-')

interface Truth {
  case: string
  threads: Array<{tid: number; role: string; cpu?: number}>
  counters: Record<string, number>
  damage: Record<string, unknown>
  tags?: {held: string[]; freed: string[]}
  crash?: {signal: string; tid: number; siAddr: string; frames: Array<{pc: string; function: string | null}>; registers: Record<string, string>}
  core: {words: {span?: {freelist: number}}}
}

interface Overflow {
  culprit: string
  culpritClass: string
  text: string
  usable: number
  bytesPastUsable: number
  textBytesPastUsable: number
  victim: string
  victimAfter: string
  victimHost: {embed: number}
  span: {record: string; start: string; sizeClass: number; size: number; objects: number; freeBehindVictimLink: number}
}

interface DoubleFree {
  address: string
  type: string
  usable: number
  cpu: number
  sizeClass: number
  slab: {header: string; slot1: string; slot2: string}
  owners: Array<{address: string; fieldOffset: number}>
}

/** What `toma damage --json` prints: the query's answer as the index keeps it. */
type Damage = HeapDamage

const truthOf = (id: string) => JSON.parse(fs.readFileSync(path.join(DIR, id, 'truth.json'), 'utf8')) as Truth
const cores = new Map<string, string>()
const damages = new Map<string, Damage>()
const index = (id: string) => path.join(temp, `${id}.toma-index`)

beforeAll(async () => {
  for (const id of fs.readdirSync(DIR).filter(d => fs.existsSync(path.join(DIR, d, 'core.sparse.br')))) {
    const core = await sparseCorePath(path.join(DIR, id, 'core.sparse.br'))
    cores.set(id, core)
    const r = await runToma(['damage', core, '--exe', EXE, '--index', index(id), '--json'])
    // No refusal, no internal error: every crashed heap is analysed.
    expect({id, status: r.status, stderr: r.stderr.split('\n').filter(l => !l.startsWith('toma: no index'))}).toEqual({id, status: 0, stderr: ['']})
    damages.set(id, JSON.parse(r.stdout) as Damage)
  }
}, 600_000)

afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

/** The heap model of a case, read directly (its per-object states). */
function heapOf(id: string): {heap: GoogleHeap; close: () => void} {
  const program = Program.load(Core.open(cores.get(id)!), {exe: EXE})
  return {heap: analyzeGoogleHeap(program), close: () => program.core.close()}
}

const stateOf = (heap: GoogleHeap, address: string) => {
  const o = objectAt(heap, addr(address))
  expect(o?.start).toBe(addr(address))
  return heap.state[o!.index]!
}

/** The process's own figures, less what toma counts otherwise because of the damage (`live` more bytes live, out of `from`). */
function expectTotals(heap: GoogleHeap, counters: Record<string, number>, live: number, from: 'central' | 'front') {
  const b = heap.totals.bytes
  expect(b[LIVE]).toBe(counters['generic.current_allocated_bytes']! + live)
  expect(b[THREAD_CACHE]).toBe(counters['tcmalloc.cpu_free']! - (from === 'front' ? live : 0))
  expect(b[TRANSFER_CACHE]).toBe(counters['tcmalloc.transfer_cache_free']! + counters['tcmalloc.sharded_transfer_cache_free']!)
  expect(b[CENTRAL_CACHE]! + heap.totals.spanWaste).toBe(counters['tcmalloc.central_cache_free']! - (from === 'central' ? live : 0))
  expect(b[PAGE_HEAP]).toBe(counters['tcmalloc.page_heap_free'])
}

describe('crashed google/tcmalloc heaps', () => {
  it('every case is there: an overflow into a span list, a double free into a per-CPU slab, parked and crashing', () => {
    expect([...cores.keys()].sort()).toEqual(['double-free', 'double-free-crash', 'overflow', 'overflow-crash'])
    for (const id of cores.keys()) expect(truthOf(id).counters['tcmalloc.per_cpu_caches_active']).toBe(1)
  })

  it("overflow: the span record, the victim's link word and its 16-bit value, the objects lost behind it, the culprit and its type", () => {
    const t = truthOf('overflow')
    const d = t.damage as unknown as Overflow
    const found = damages.get('overflow')!.findings
    expect(found).toHaveLength(1)
    const f = found[0]!
    const victimAfter = Buffer.from(d.victimAfter, 'hex')
    expect(f).toMatchObject({kind: 'overwritten-link', structureAddress: d.span.record, slot: d.victim, entry: d.victim, value: `0x${victimAfter.readUInt16LE(0).toString(16)}`})
    expect(f.structure).toContain(`span record ${d.span.record} (objects at ${d.span.start}, class ${d.span.sizeClass})`)
    // The link held two characters of the text; the 8 bytes there are the text the overrun wrote.
    expect(f.valueMeans).toContain(`"${d.text.slice(8, 16)}"`)
    // Lost: the victim's index words the overrun covered, and every free object its link led to.
    const overwritten = Array.from({length: d.victimHost.embed}, (_, j) => j + 1).filter(j => 2 * j < d.bytesPastUsable).length
    expect(f.objectsBehind).toBe(overwritten + d.span.freeBehindVictimLink)
    expect(damages.get('overflow')!.unknownBehindDamage).toEqual({objects: f.objectsBehind, bytes: f.objectsBehind * d.usable})
    // The text ends with its NUL inside the victim: the non-zero bytes there are exactly how far it ran.
    expect(f.culprit).toMatchObject({address: d.culprit, type: d.culpritClass, state: 'live', bytesPastEnd: d.textBytesPastUsable})
    expect(damages.get('overflow')!.crash).toBeNull()
  })

  it('overflow: every other object has the state the process recorded, and every figure is the process\'s, less the lost objects', () => {
    const t = truthOf('overflow')
    const d = t.damage as unknown as Overflow
    const {heap, close} = heapOf('overflow')
    const lost = damages.get('overflow')!.findings[0]!.objectsBehind
    for (const a of t.tags!.held) expect(stateOf(heap, a)).toBe(LIVE)
    const start = addr(d.span.start)
    const liveFreed = t.tags!.freed.filter(a => stateOf(heap, a) === LIVE)
    // Freed objects counted live are only the lost ones, all in the victim's span.
    expect(liveFreed.length).toBeGreaterThan(0)
    expect(liveFreed.length).toBeLessThanOrEqual(lost)
    for (const a of liveFreed) expect(addr(a) >= start && addr(a) < start + d.span.objects * d.span.size).toBe(true)
    expect(stateOf(heap, d.victim)).toBe(CENTRAL_CACHE)
    expectTotals(heap, t.counters, lost * d.usable, 'central')
    close()
  })

  it('overflow, then allocations until tcmalloc faults: the crashing thread and frame, the span whose list it followed, the culprit', () => {
    const t = truthOf('overflow-crash')
    const d = t.damage as unknown as Overflow
    const damage = damages.get('overflow-crash')!
    // The victim was handed out; tcmalloc followed its bad link into made-up hosts, and freelist_ holds where it got to.
    const freelist = `0x${t.core.words.span!.freelist.toString(16)}`
    expect(damage.findings).toHaveLength(1)
    const f = damage.findings[0]!
    expect(f).toMatchObject({kind: 'overwritten-link', structureAddress: d.span.record, slot: `0x${(addr(d.span.record) + 18).toString(16)}`, value: freelist, entry: null})
    // The string that ran on is still in the victim, handed out untouched: the live Tag before it wrote it.
    expect(f.culprit).toMatchObject({address: d.culprit, type: d.culpritClass, state: 'live', bytesPastEnd: d.textBytesPastUsable})
    const crash = damage.crash!
    expect(crash).toMatchObject({tid: t.crash!.tid, signalName: t.crash!.signal, faultAddress: t.crash!.siAddr})
    expect(t.crash!.tid).toBe(t.threads.find(th => th.role === 'mutator')!.tid)
    // gdb lists the inlined frames at the faulting pc too; the function they are inlined in is toma's first frame.
    const atPc = t.crash!.frames.filter(fr => fr.pc === t.crash!.frames[0]!.pc)
    expect(crash.frames[0]).toContain(atPc[atPc.length - 1]!.function!)
    expect(crash.frames[0]).toContain('CentralFreeList')
    // The fault is in tcmalloc's own code, as the model's activity (its threads' frames) tells.
    expect(crash.inAllocator).toBe(true)
    expect(crash.frames.some(fr => fr.startsWith('run_overflow('))).toBe(true)
    // The register toma says held the bad value held it at the signal, as gdb read it.
    expect(crash.following).toMatchObject({value: freelist})
    expect(t.crash!.registers[crash.following!.register!]).toBe(freelist)
    // Every Tag the program holds is live still.
    const {heap, close} = heapOf('overflow-crash')
    for (const a of t.tags!.held) expect(stateOf(heap, a)).toBe(LIVE)
    close()
  })

  it("double free: the CPU's slab and class, both slots holding the pointer, the object and its type", () => {
    const t = truthOf('double-free')
    const d = t.damage as unknown as DoubleFree
    const found = damages.get('double-free')!.findings
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({
      kind: 'on-a-list-twice',
      structure: `the per-CPU slab of CPU ${d.cpu}, class ${d.sizeClass}`,
      structureAddress: d.slab.header,
      slot: d.slab.slot2,
      value: d.address,
      objectsBehind: 0,
      twice: {address: d.address, type: d.type, state: 'thread-cache', reachedFirstAt: d.slab.slot1},
    })
    expect(t.threads.find(th => th.role === 'mutator')!.cpu).toBe(d.cpu)
    expect(damages.get('double-free')!.crash).toBeNull()
    // tcmalloc's own count of what the CPU caches hold counts the object twice: a bound, not a figure.
    expect(damages.get('double-free')!.touchedFigures).toContainEqual({property: 'tcmalloc.cpu_free', why: 'a damaged list', inFlight: false})
    // tcmalloc counts the object free twice; toma once: it is the one difference.
    const {heap, close} = heapOf('double-free')
    expect(stateOf(heap, d.address)).toBe(THREAD_CACHE)
    expectTotals(heap, t.counters, d.usable, 'front')
    close()
  })

  it('double free, both copies handed out and used: the crashing thread and frame as gdb saw them, both owners of the one object, nothing false', async () => {
    const t = truthOf('double-free-crash')
    const d = t.damage as unknown as DoubleFree
    const damage = damages.get('double-free-crash')!
    expect(damage.findings).toEqual([])
    expect(damage.crash).toMatchObject({tid: t.crash!.tid, signalName: t.crash!.signal, faultAddress: t.crash!.siAddr, inAllocator: false})
    expect(t.crash!.tid).toBe(t.threads.find(th => th.role === 'mutator')!.tid)
    expect(damage.crash!.frames[0]).toContain(t.crash!.frames[0]!.function!)
    // The object given to two owners: refs lists both.
    const r = await runToma(['refs', d.address, cores.get('double-free-crash')!, '--index', index('double-free-crash'), '--json'])
    expect(r.status).toBe(0)
    const incoming = JSON.parse(r.stdout).incoming as Array<{from: {address: string}; offset: number}>
    for (const o of d.owners) expect(incoming).toContainEqual(expect.objectContaining({from: expect.objectContaining({address: o.address}), offset: o.fieldOffset}))
    // Freed twice and handed out twice, tcmalloc's counts come out even: the object is live once.
    const {heap, close} = heapOf('double-free-crash')
    expect(stateOf(heap, d.address)).toBe(LIVE)
    expectTotals(heap, t.counters, 0, 'front')
    close()
  })

  it('toma damage says each in words: the structure, the value, the culprit', async () => {
    const o = truthOf('overflow').damage as unknown as Overflow
    const text = await runToma(['damage', cores.get('overflow')!, '--index', index('overflow')])
    expect(text.stdout).toContain(`span record ${o.span.record}`)
    expect(text.stdout).toContain(`likely culprit: the live ${o.culpritClass} at ${o.culprit}`)
    const df = truthOf('double-free').damage as unknown as DoubleFree
    const twice = await runToma(['damage', cores.get('double-free')!, '--index', index('double-free')])
    expect(twice.stdout).toContain(`[on-a-list-twice] the per-CPU slab of CPU ${df.cpu}, class ${df.sizeClass} at ${df.slab.header}`)
    expect(twice.stdout).toContain(`the ${df.type} at ${df.address} is held twice, first at ${df.slab.slot1}: freed twice (a double free)`)
  })
})
