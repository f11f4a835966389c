import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import type {FileOverlay} from '../../src/core/file-reader.js'
import {TomaError} from '../../src/errors.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../../src/tcmalloc/heap.js'
import {asHeapModel} from '../../src/tcmalloc/model.js'
import {SPAN} from '../../src/tcmalloc/layout.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, type FixtureEntry} from '../helpers/fixture-core.js'
import {liveObjects} from './live-set.js'

// Damage to TCMalloc's own structures, read through a copy-on-write overlay of the fixture core
// (nothing is copied or left behind): whatever the words become, analysis ends with a model and
// warnings, or one TomaError; never anything else (no TypeError, RangeError, hang or runaway
// memory), and an answer that changed comes with a warning or a cross-check figure that no longer
// agrees with TCMalloc's counters. `npm run fuzz` runs the long series; TOMA_FUZZ_SEED and
// TOMA_FUZZ_ROUNDS run other or longer series of the random test here by hand.
const ROUNDS = Number(process.env.TOMA_FUZZ_ROUNDS ?? 12)
const IDS = ['v2.10-shared', 'v2.18.1-shared']

interface Outcome {
  error?: unknown
  heap?: TcmallocHeap
  changed?: boolean
  warned?: boolean
}

/** What the user reads: live set and bytes per state. */
function answer(heap: TcmallocHeap): string {
  const live = liveObjects(heap)
  let sum = 0
  for (const [a] of live) sum = (sum + (a % 1_000_000_007)) % 1_000_000_007
  return `${live.size}/${sum}/${Array.from(heap.totals.bytes).join(',')}`
}

async function fixture(id: string) {
  const entry = fixtureIndex().find(f => f.id === id)! as FixtureEntry
  const path = await fixtureCorePath(id)
  const program = Program.load(Core.open(path), fixtureFlags(entry))
  const heap = analyzeHeap(program)
  const expected = answer(heap)
  /** File offset of a process address in the core. */
  const offset = (address: number) => {
    const seg = program.core.memory.segmentAt(address)!
    return seg.fileOffset + (address - seg.start)
  }
  const u64 = (address: number, value: number) => {
    const bytes = Buffer.alloc(8)
    bytes.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value)))
    return {offset: offset(address), bytes}
  }
  const u32 = (address: number, value: number) => {
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32LE(value >>> 0)
    return {offset: offset(address), bytes}
  }
  const run = (overlay: FileOverlay): Outcome => {
    let damaged: Program | undefined
    try {
      damaged = Program.load(Core.open(path, overlay), fixtureFlags(entry))
      const h = analyzeHeap(damaged)
      const graph = scanHeapGraph(damaged, asHeapModel(h))
      const changed = answer(h) !== expected
      const warned = h.warnings.total > 0 || graph.warnings.total > 0 || h.crossCheck.some(c => c.toma !== c.allocator)
      return {heap: h, changed, warned}
    } catch (error) {
      return {error}
    } finally {
      damaged?.core.close()
    }
  }
  return {entry, path, program, heap, run, offset, u64, u32}
}

/** The outcome is a model or one TomaError, and a changed answer is never silent. */
function expectHonest(o: Outcome, what: string) {
  if (o.error !== undefined) {
    expect(o.error, `${what}: ${(o.error as Error).stack}`).toBeInstanceOf(TomaError)
    return
  }
  expect(o.changed && !o.warned, `${what}: the answer changed without a warning`).toBe(false)
}

describe.each(IDS)('damaged allocator structures (%s)', id => {
  it('survives random words written over the allocator\'s structures', async () => {
    const f = await fixture(id)
    const g = f.heap.globals
    const targets: number[] = []
    for (let s = 0; s < f.heap.spans.count; s++) for (let k = 0; k < 6; k++) targets.push(f.heap.spans.record[s]! + k * 8)
    for (let k = 0; k < 128 * 1216; k += 8) targets.push(g.centralCache + k)
    for (const c of f.heap.threadCaches) for (let k = 0; k < g.layout.threadCache.objectSize; k += 8) targets.push(c.address + k)
    for (let k = 0; k < 128 * 96; k += 8) targets.push(g.pageHeap + g.layout.pageHeap.free + k)
    let seed = Number(process.env.TOMA_FUZZ_SEED ?? 20261122)
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    let withWarnings = 0
    for (let round = 0; round < ROUNDS; round++) {
      const patches = []
      for (let m = 0; m < 20; m++) {
        const at = targets[random() % targets.length]!
        const choice = random() % 4
        const value = choice === 0 ? 0 : choice === 1 ? random() * 4096 : choice === 2 ? targets[random() % targets.length]! : 2 ** 64 - 1
        patches.push(f.u64(at, value))
      }
      const o = f.run({patches})
      if (o.warned) withWarnings++
      expectHonest(o, `round ${round}`)
    }
    // The damage is seen.
    expect(withWarnings).toBeGreaterThan(0)
    f.program.core.close()
  })

  it('survives plausible wrong values: lengths and starts of other spans, counts just over their bounds, pointers into other valid lists', async () => {
    const f = await fixture(id)
    const {spans, globals: g} = f.heap
    const L = g.layout
    const page = (s: number) => spans.start[s]! / L.pageSize
    const system = f.program.core.memory.readU64(g.pageHeap + L.pageHeap.stats + L.stats.systemBytes)!
    const heapPages = system / L.pageSize
    // Spans spread over the table, each damaged alone: its length and start set to another real span's, or just past the heap.
    for (let s = 1; s < spans.count; s += 60) {
      const other = (s * 7 + 3) % spans.count
      const rec = spans.record[s]!
      for (const pages of [page(other) + spans.pages[other]! - page(s), spans.pages[s]! + 1, heapPages + 1]) {
        expectHonest(f.run({patches: [f.u64(rec + SPAN.length, pages)]}), `span ${s} length ${pages}`)
      }
      for (const start of [page(other), page(s) + heapPages]) {
        expectHonest(f.run({patches: [f.u64(rec + SPAN.start, start)]}), `span ${s} start ${start}`)
      }
    }
    // A small span's own free list pointed into another span's list.
    const small = [...Array(spans.count).keys()].filter(s => spans.location[s] === IN_USE && spans.sizeClass[s]! > 0 && spans.freeHead[s] !== 0)
    for (let i = 0; i + 1 < small.length; i += 40) {
      expectHonest(f.run({patches: [f.u64(spans.record[small[i]!]! + SPAN.objects, spans.freeHead[small[i + 1]!]!)]}), `span ${small[i]} free list`)
    }
    // Thread caches: each list's head pointed at the next class's list, its length one over, the cache list cut.
    const tc = L.threadCache
    for (const c of f.heap.threadCaches.slice(0, 1)) {
      for (let cl = 2; cl + 1 < g.sizes.count; cl += 40) {
        const list = c.address + tc.list + cl * tc.freeListSize
        const nextHead = f.program.core.memory.readU64(list + tc.freeListSize + L.freeList.list)!
        const length = f.program.core.memory.readU32(list + L.freeList.length)!
        expectHonest(f.run({patches: [f.u64(list + L.freeList.list, nextHead)]}), `cache ${c.address} class ${cl} head`)
        expectHonest(f.run({patches: [f.u32(list + L.freeList.length, length + 1)]}), `cache ${c.address} class ${cl} length`)
      }
      const cut = f.run({patches: [f.u64(c.address + tc.next, 0)]})
      expectHonest(cut, `cache ${c.address} next_ cut`)
    }
    // The central cache: counters one over, used_slots_ one under, one over, and past its 64 slots.
    const cc = L.central
    for (let cl = 3; cl < g.sizes.count; cl += 50) {
      const e = g.centralCache + cl * cc.stride
      const used = f.program.core.memory.readI32(e + cc.usedSlots)!
      const counter = f.program.core.memory.readU64(e + cc.counter)!
      for (const v of [used + 1, 65]) expectHonest(f.run({patches: [f.u32(e + cc.usedSlots, v)]}), `class ${cl} used_slots_ ${v}`)
      expectHonest(f.run({patches: [f.u64(e + cc.counter, counter + 1)]}), `class ${cl} counter_ + 1`)
    }
    f.program.core.close()
  })

  it('survives the core cut at every structure boundary', async () => {
    const f = await fixture(id)
    const {spans, globals: g} = f.heap
    // The ELF header, the program headers, the allocator's globals, a thread cache, span records and span memory.
    const boundaries = [64, 64 + 56, f.offset(g.pageHeap), f.offset(g.centralCache), f.offset(f.heap.threadCaches[0]!.address)]
    for (let s = 0; s < spans.count; s += 50) boundaries.push(f.offset(spans.start[s]!), f.offset(spans.record[s]!) + SPAN.size - 1)
    // And the segments the file holds after every structure of the allocator (thread stacks, libraries' data).
    const last = Math.max(...boundaries, f.offset(g.sizeMap) + 4096)
    boundaries.push(...f.program.core.memory.segments.filter(seg => seg.fileSize > 0 && seg.fileOffset > last).map(seg => seg.fileOffset + 8).slice(0, 3))
    for (const size of boundaries) {
      const o = f.run({patches: [], size})
      expectHonest(o, `cut at ${size}`)
      // gcore writes the notes last, so every cut loses them: one clear line saying so. (A cut the
      // model survived would carry the truncation warning.)
      if (o.heap) expect(o.heap.warnings.list.some(w => w.kind === 'core' && /truncated/.test(w.message)), `cut at ${size}`).toBe(true)
      else expect(String(o.error), `cut at ${size}`).toMatch(/truncated core/)
    }
    f.program.core.close()
  })
})

it('names what it cannot see: a cut thread-cache list and a used_slots_ counter set too low give warnings', async () => {
  const f = await fixture('v2.10-shared')
  const {globals: g} = f.heap
  const first = f.heap.threadCaches[0]!
  const cut = f.run({patches: [f.u64(first.address + g.layout.threadCache.next, 0)]})
  // The caches the cut list no longer reaches that hold objects (the one-off empty cache of a thread
  // that moved on is no thread's current cache, so nothing could know of it).
  const missed = f.heap.threadCaches.slice(1).filter(c => c.objects > 0).map(c => c.address)
  expect(missed.length).toBeGreaterThan(0)
  expect(cut.changed).toBe(true)
  for (const cache of missed) expect(cut.heap!.warnings.list.some(w => w.kind === 'thread-cache' && w.addresses.includes(cache) && /not on the thread_heaps_ list/.test(w.message))).toBe(true)

  const cc = g.layout.central
  const cl = [...Array(g.sizes.count).keys()].find(c => c > 0 && (f.program.core.memory.readI32(g.centralCache + c * cc.stride + cc.usedSlots) ?? 0) > 0)!
  const e = g.centralCache + cl * cc.stride
  const used = f.program.core.memory.readI32(e + cc.usedSlots)!
  const low = f.run({patches: [f.u32(e + cc.usedSlots, used - 1)]})
  expect(low.changed).toBe(true)
  expect(low.heap!.warnings.list.filter(w => w.kind === 'transfer-cache').map(w => w.addresses)).toEqual([[e + cc.slots + (used - 1) * 16]])
  f.program.core.close()
  // Nothing was written: the overlay left the fixture as it was.
  expect(fs.statSync(f.path).size).toBe(f.entry.coreBytes)
})

it('a cut thread-cache list where no thread\'s TLS is known (static link) is caught by thread_heap_count_', async () => {
  const f = await fixture('v2.10-static')
  const {globals: g} = f.heap
  expect(g.threadHeapCount).not.toBeNull()
  const cut = f.run({patches: [f.u64(f.heap.threadCaches[0]!.address + g.layout.threadCache.next, 0)]})
  expect(cut.changed).toBe(true)
  expect(cut.heap!.warnings.list.filter(w => w.kind === 'thread-cache').map(w => w.message)).toEqual([
    `ThreadCache::thread_heap_count_ says ${f.heap.threadCaches.length}, the thread_heaps_ list has 1 caches: objects of caches not reached are counted as live`,
  ])
  f.program.core.close()
})
