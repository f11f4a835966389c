import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import type {FileOverlay} from '../../src/core/file-reader.js'
import {TomaError} from '../../src/errors.js'
import {analyzeGoogleHeap, type GoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {CENTRAL_CACHE, LIVE, THREAD_CACHE, TRANSFER_CACHE} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import {sparseCorePath} from '../helpers/fixture-core.js'

// Damage to google/tcmalloc's own structures, read through a copy-on-write overlay of a fixture
// core (nothing is copied or left behind). A bad entry is a damage finding naming the structure,
// the word it was read from and the value there; the objects behind it count live, and nothing
// else in the heap changes. Random words end in a model with warnings or one TomaError, and an
// answer that changed is never silent.
const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc', import.meta.url))
const ROUNDS = Number(process.env.TOMA_FUZZ_ROUNDS ?? 12)
const POISON = 0x4141414141414141n

async function fixture(id: string) {
  const corePath = await sparseCorePath(path.join(DIR, id, 'core.sparse.br'))
  const exe = path.join(DIR, id, 'gtcdemo')
  const program = Program.load(Core.open(corePath), {exe})
  const heap = analyzeGoogleHeap(program)
  const memory = program.core.memory
  const offset = (address: number) => {
    const seg = memory.segmentAt(address)!
    return seg.fileOffset + (address - seg.start)
  }
  const word = (address: number, value: bigint | number) => {
    const bytes = Buffer.alloc(8)
    bytes.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value)))
    return {offset: offset(address), bytes}
  }
  const u16 = (address: number, value: number) => {
    const bytes = Buffer.alloc(2)
    bytes.writeUInt16LE(value)
    return {offset: offset(address), bytes}
  }
  /** The heap read through the overlay, or the error that ended the reading. */
  const run = (overlay: FileOverlay): {heap?: GoogleHeap; error?: unknown} => {
    let damaged: Program | undefined
    try {
      damaged = Program.load(Core.open(corePath, overlay), {exe})
      return {heap: analyzeGoogleHeap(damaged)}
    } catch (error) {
      return {error}
    } finally {
      damaged?.core.close()
    }
  }
  return {program, heap, memory, run, word, u16, close: () => program.core.close()}
}

/** The slots whose state differs between two readings of the same heap. */
function changedSlots(a: GoogleHeap, b: GoogleHeap): number[] {
  expect(b.state.length).toBe(a.state.length)
  const out: number[] = []
  for (let i = 0; i < a.state.length; i++) if (a.state[i] !== b.state[i]) out.push(i)
  return out
}

describe('a damaged google/tcmalloc heap (gtc-2026-08-perthread)', () => {
  it('names a transfer-cache slot that holds no object, and counts only that object live', async () => {
    const f = await fixture('gtc-2026-08-perthread')
    expect(f.heap.damage.count).toBe(0)
    const L = f.heap.layout.transferCache
    const tc = f.heap.globals.at.transferCache!
    const cls = [...Array(f.heap.shift.numClasses).keys()].find(c => c > 0 && (f.memory.readI32(tc + c * L.stride + L.slotInfo) ?? 0) >= 2)!
    expect(cls).toBeGreaterThan(0)
    const at = tc + cls * L.stride
    const slots = f.memory.readU64(at + L.slots)!
    const victim = f.memory.readU64(slots + 8)!
    // A poisoned word, then a live object of another class.
    const other = f.heap.spans.tcmallocClass.findIndex((c, s) => c !== 0 && c !== cls && f.heap.spans.location[s] === 0 && f.heap.state[f.heap.spans.firstObject[s]!] === LIVE)
    for (const [value, kind] of [[POISON, 'overwritten-link'], [BigInt(f.heap.spans.start[other]!), 'link-into-other-span']] as const) {
      const d = f.run({patches: [f.word(slots + 8, value)]}).heap!
      expect(d.damage.findings).toHaveLength(1)
      const finding = d.damage.findings[0]!
      expect(finding).toMatchObject({kind, structureAddress: at, slot: slots + 8, value: `0x${value.toString(16)}`, entry: 0, objectsBehind: 0})
      expect(d.classOfCompact[finding.sizeClass]).toBe(cls)
      const changed = changedSlots(f.heap, d)
      expect(changed).toHaveLength(1)
      expect(f.heap.state[changed[0]!]).toBe(TRANSFER_CACHE)
      expect(d.state[changed[0]!]).toBe(LIVE)
      expect(d.warnings.list.some(w => w.damage && w.addresses.includes(slots + 8))).toBe(true)
      // The victim is the object the slot named.
      const s = f.heap.spans.start.findIndex((start, i) => victim >= start && victim < start + f.heap.spans.pages[i]! * f.heap.pageSize)
      expect(changed[0]).toBe(f.heap.spans.firstObject[s]! + (victim - f.heap.spans.start[s]!) / f.heap.spans.objectSize[s]!)
    }
    f.close()
  })

  it("names a thread cache's broken link, with the entry that held it and the objects lost behind it", async () => {
    const f = await fixture('gtc-2026-08-perthread')
    const L = f.heap.layout.threadCache
    let list = 0
    let length = 0
    for (const c of f.heap.frontCaches) {
      for (let cls = 1; cls < f.heap.shift.numClasses && !list; cls++) {
        const at = c.address + f.heap.shift.threadCacheList + cls * L.freeListStride
        const n = f.memory.readU32(at + L.freeListLength) ?? 0
        if (n >= 4) [list, length] = [at, n]
      }
    }
    expect(list).toBeGreaterThan(0)
    const first = f.memory.readU64(list + L.freeListHead)!
    const d = f.run({patches: [f.word(first, 8)]}).heap!
    expect(d.damage.findings).toHaveLength(1)
    expect(d.damage.findings[0]).toMatchObject({kind: 'overwritten-link', structureAddress: list, slot: first, entry: first, value: '0x8', objectsBehind: length - 2})
    expect(d.damage.findings[0]!.bytesBehind).toBe((length - 2) * f.heap.spans.objectSize[f.heap.spans.start.findIndex((s, i) => first >= s && first < s + f.heap.spans.pages[i]! * f.heap.pageSize)]!)
    // The first object stays cached; the length − 1 after it count live.
    const changed = changedSlots(f.heap, d)
    expect(changed).toHaveLength(length - 1)
    for (const slot of changed) expect([f.heap.state[slot], d.state[slot]]).toEqual([THREAD_CACHE, LIVE])
    f.close()
  })

  it("names a span whose own free list names no object of it, and changes nothing outside that span", async () => {
    const f = await fixture('gtc-2026-08-perthread')
    const {spans, layout} = f.heap
    const bitmapMin = f.heap.pageSize / layout.span.bitmapBits
    const s = [...Array(spans.count).keys()].find(i => spans.tcmallocClass[i]! > 0 && spans.objectSize[i]! < bitmapMin && spans.location[i] === 0 && (f.memory.readU8(spans.record[i]! + layout.span.cacheSize) ?? 0) % 2 ** layout.span.cacheSizeBits >= 2)!
    expect(s).toBeGreaterThanOrEqual(0)
    const record = spans.record[s]!
    const d = f.run({patches: [f.u16(record + layout.span.cache, 0xfffe)]}).heap!
    expect(d.damage.findings).toHaveLength(1)
    expect(d.damage.findings[0]).toMatchObject({kind: 'overwritten-link', structureAddress: record, slot: record + layout.span.cache})
    const changed = changedSlots(f.heap, d)
    expect(changed.length).toBeGreaterThan(0)
    const first = spans.firstObject[s]!
    for (const slot of changed) {
      expect(slot >= first && slot < first + spans.objectCount[s]!).toBe(true)
      expect([f.heap.state[slot], d.state[slot]]).toEqual([CENTRAL_CACHE, LIVE])
    }
    // Lying about allocated_ alone is found too.
    const allocated = f.memory.readU16(record + layout.span.allocated)!
    const lie = f.run({patches: [f.u16(record + layout.span.allocated, allocated + 1)]}).heap!
    expect(lie.damage.findings.map(x => [x.kind, x.structureAddress])).toEqual([['counter-disagrees', record]])
    expect(changedSlots(f.heap, lie)).toHaveLength(0)
    f.close()
  })
})

describe('a damaged google/tcmalloc global (gtc-envoy-2024-12-27-release-percpu)', () => {
  it("is a warning that names it, not the end of the analysis: the family is still told by the globals that are in place", async () => {
    const f = await fixture('gtc-envoy-2024-12-27-release-percpu')
    expect(f.heap.warnings.total).toBe(0)
    const pa = f.heap.globals.at.pageAllocator!
    const d = f.run({patches: [f.word(pa + f.heap.shift.backEnd!.normalImpl, 0)]}).heap!
    expect(d.layout.family).toBe(f.heap.layout.family)
    expect(d.warnings.list.filter(w => w.kind === 'globals').map(w => w.message)).toEqual([
      `family ${f.heap.layout.family}: the page allocator (normal_impl_[0]) is not where the family puts it, while the other globals are: read where the family says, it may be damaged`,
    ])
    // The live set is the page map's and the lists': the page allocator's damage leaves it as it was.
    const live = (h: GoogleHeap) => h.totals.bytes[LIVE]
    expect(live(d)).toBe(live(f.heap))
    f.close()
  })
})

describe('a 2023 allocator whose lifetime-based allocator holds a region (gtc-2023-02-27-release-percpu)', () => {
  it('is a warning that its pages are not read, with the rest of the heap as it was', async () => {
    const f = await fixture('gtc-2023-02-27-release-percpu')
    expect(f.heap.warnings.total).toBe(0)
    const B = f.heap.shift.backEnd!
    // The fixture runs with the allocator off (its default): one region made to appear in its count.
    const hpaa = Number(f.memory.readU64(f.heap.globals.at.pageAllocator! + B.normalImpl))
    const d = f.run({patches: [f.word(hpaa + B.lifetimeRegionsCount!, 1)]}).heap!
    expect(d.warnings.list.map(w => w.message)).toEqual([`huge-page-aware allocator 0x${hpaa.toString(16)}'s lifetime-based allocator holds 1 region(s): their free pages are not walked, nor counted`])
    expect(changedSlots(f.heap, d)).toHaveLength(0)
    f.close()
  })
})

describe.each(['gtc-2026-08-perthread', 'gtc-mongo-20240522-release-percpu'])('random words over google/tcmalloc structures (%s)', id => {
  it('end in a model with warnings or one TomaError, never a silent change', async () => {
    const f = await fixture(id)
    const {spans, layout, shift} = f.heap
    const targets: number[] = []
    for (let s = 0; s < spans.count; s++) for (let k = 0; k < layout.span.size; k += 8) targets.push(spans.record[s]! + k)
    const tc = f.heap.globals.at.transferCache!
    for (let k = 0; k < shift.numClasses * layout.transferCache.stride; k += 8) targets.push(tc + k)
    for (const c of f.heap.frontCaches.slice(0, 2)) for (let k = 0; k < shift.numClasses * 8; k += 8) targets.push(c.address + k)
    // Words the core holds (a structure may end where its segment's bytes do).
    const inCore = targets.filter(a => f.memory.readU64(a) !== undefined)
    expect(inCore.length).toBeGreaterThan(targets.length / 2)
    targets.splice(0, targets.length, ...inCore)
    const baseWarnings = f.heap.warnings.total
    let seed = Number(process.env.TOMA_FUZZ_SEED ?? 20261128)
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    let seen = 0
    for (let round = 0; round < ROUNDS; round++) {
      const patches = []
      for (let m = 0; m < 20; m++) {
        const at = targets[random() % targets.length]!
        const choice = random() % 4
        const value = choice === 0 ? 0 : choice === 1 ? random() % 4096 : choice === 2 ? targets[random() % targets.length]! : 2n ** 64n - 1n
        patches.push(f.word(at, value))
      }
      const o = f.run({patches})
      if (o.error !== undefined) {
        expect(o.error, `round ${round}: ${(o.error as Error).stack}`).toBeInstanceOf(TomaError)
        continue
      }
      const changed = o.heap!.state.length !== f.heap.state.length || changedSlots(f.heap, o.heap!).length > 0
      const warned = o.heap!.warnings.total > baseWarnings || o.heap!.damage.count > 0
      expect(changed && !warned, `round ${round}: the heap changed without a warning`).toBe(false)
      if (warned) seen++
    }
    expect(seen).toBeGreaterThan(0)
    f.close()
  })
})

describe('the fixtures this test damages', () => {
  it('are there', () => {
    for (const id of ['gtc-2026-08-perthread', 'gtc-mongo-20240522-release-percpu', 'gtc-envoy-2024-12-27-release-percpu']) expect(fs.existsSync(path.join(DIR, id, 'core.sparse.br'))).toBe(true)
  })
})
