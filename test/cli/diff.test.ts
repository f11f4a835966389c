import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {copyDiffPair, diffPairFlags as flags, type DiffTruth} from '../helpers/diff-pair.js'
import {fixtureCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

interface Row {
  type: string
  born: {objects: number; bytes: number}
  died: {objects: number; bytes: number}
  kept: {objects: number; bytes: number}
  net: {objects: number; bytes: number}
}

describe('toma diff on the pair of diffdemo cores', () => {
  let work: string
  let before: string
  let after: string
  let truth: DiffTruth

  beforeAll(async () => {
    work = testTemp('toma-diff-')
    ;({before, after, truth} = await copyDiffPair(work))
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('reports exactly the objects the process added and freed, and the holder that grew', async () => {
    const r = await runToma(['diff', before, after, ...flags, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const d = JSON.parse(r.stdout)
    const {born, died} = truth.change
    // Entry and Stale share a size class: the freed slots were handed to the new objects, and the
    // diff must still see one died and one born for each, not a kept object.
    expect(truth.change.reusedAddresses).toBeGreaterThan(0)
    expect(truth.sizes[born.type]).toBe(truth.sizes[died.type])
    const changed = (d.types as Row[]).filter(t => t.born.objects || t.died.objects)
    expect(changed.map(t => t.type).sort()).toEqual([born.type, died.type].sort())
    const b = changed.find(t => t.type === born.type)!
    expect(b.born).toEqual({objects: born.count, bytes: born.count * truth.sizes[born.type]!})
    expect(b.died).toEqual({objects: 0, bytes: 0})
    expect(b.kept.objects).toBe(truth.before[born.type])
    const x = changed.find(t => t.type === died.type)!
    expect(x.died).toEqual({objects: died.count, bytes: died.count * truth.sizes[died.type]!})
    expect(x.born).toEqual({objects: 0, bytes: 0})
    expect(x.kept.objects).toBe(truth.after[died.type])
    const other = (d.types as Row[]).find(t => t.type === 'app::Other')!
    expect(other.kept.objects).toBe(truth.after['app::Other'])
    expect(d.totals.born.objects).toBe(born.count)
    expect(d.totals.died.objects).toBe(died.count)

    // The holder: the cache, grown by what the process measured it keeps, via its entries_ field.
    const top = d.growth[0]
    expect(top.holder.address).toBe(truth.holder.address)
    expect(top.holder.type).toBe(truth.holder.class)
    expect(top.retainedBefore).toBe(truth.before.phase.cacheRetainedBytes)
    expect(top.retainedAfter).toBe(truth.after.phase.cacheRetainedBytes)
    expect(top.growth).toBe(truth.after.phase.cacheRetainedBytes - truth.before.phase.cacheRetainedBytes)
    expect(top.via.offset).toBe(truth.holder.fieldOffset)
    expect(top.via.child.address).toBe(truth.holder.entriesBuffer)
    expect(top.via.growth).toBe(born.count * truth.sizes[born.type]!)

    // TCMalloc's states change as its own counters did.
    const state = (s: string) => d.states.find((x: {state: string}) => x.state === s)
    const counter = (phase: 'before' | 'after', name: string) => truth[phase].phase.counters[name]!
    for (const [s, c] of [
      ['live', 'generic.current_allocated_bytes'],
      ['thread-cache', 'tcmalloc.thread_cache_free_bytes'],
      ['transfer-cache', 'tcmalloc.transfer_cache_free_bytes'],
      ['page-heap', 'tcmalloc.pageheap_free_bytes'],
      ['returned', 'tcmalloc.pageheap_unmapped_bytes'],
    ] as const) {
      expect(state(s).before.bytes, s).toBe(counter('before', c))
      expect(state(s).after.bytes, s).toBe(counter('after', c))
    }
  })

  it('says it as text: the type rows and the holder line', async () => {
    const r = await runToma(['diff', before, after, ...flags], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const {born} = truth.change
    const n = (v: number) => v.toLocaleString('en-US')
    const bytes = born.count * truth.sizes[born.type]!
    const cells = [n(born.count), n(bytes), '0', '0', n(truth.before[born.type]!), `\\+${n(born.count)}`, `\\+${n(bytes)}`, born.type]
    expect(r.stdout).toMatch(new RegExp(`^\\s*${cells.join('\\s+')}$`, 'm'))
    expect(r.stdout).toContain(`under app::Cache at ${truth.holder.address}, via +0x${truth.holder.fieldOffset.toString(16)} → ${truth.holder.entriesBuffer}`)
  })

  it('tells how fragmentation changed: each core\'s figures are its own toma memory\'s, the change their difference', async () => {
    const r = await runToma(['diff', before, after, ...flags, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const f = JSON.parse(r.stdout).fragmentation
    const memory = async (core: string) => {
      const m = await runToma(['memory', core, ...flags, '--json'], {cwd: work})
      expect(m.status, m.stderr).toBe(0)
      return JSON.parse(m.stdout)
    }
    const mem = {before: await memory(before), after: await memory(after)}
    type MemoryClass = {sizeClass: number; size: number; spans: number; spanBytes: number; liveObjects: number; partial: {freeBytes: {central: number; transfer: number; threadCaches: number}}}
    const figures = (c: MemoryClass | undefined) =>
      c
        ? {spans: c.spans, spanBytes: c.spanBytes, liveObjects: c.liveObjects, liveBytes: c.liveObjects * c.size, partialFreeBytes: c.partial.freeBytes.central + c.partial.freeBytes.transfer + c.partial.freeBytes.threadCaches}
        : {spans: 0, spanBytes: 0, liveObjects: 0, liveBytes: 0, partialFreeBytes: 0}
    const key = (c: {sizeClass: number; size: number}) => `${c.sizeClass}:${c.size}`
    const classes = (phase: 'before' | 'after') => new Map((mem[phase].fragmentation.classes as MemoryClass[]).map(c => [key(c), c]))
    const mb = classes('before')
    const ma = classes('after')
    // Every class either core has, once.
    expect(f.classes.map(key).sort()).toEqual([...new Set([...mb.keys(), ...ma.keys()])].sort())
    for (const c of f.classes) {
      const x = figures(mb.get(key(c)))
      const y = figures(ma.get(key(c)))
      for (const k of ['spans', 'spanBytes', 'liveObjects', 'liveBytes', 'partialFreeBytes'] as const) {
        expect(c[k], `class ${c.sizeClass} ${k}`).toEqual({before: x[k], after: y[k], change: y[k] - x[k]})
      }
    }
    // The order: span bytes grown minus live bytes grown, largest first.
    const beyond = f.classes.map((c: {spanBytes: {change: number}; liveBytes: {change: number}}) => c.spanBytes.change - c.liveBytes.change)
    expect(beyond).toEqual([...beyond].sort((p: number, q: number) => q - p))
    // What the process counted: its 96-byte Entry and Stale objects are the live slots of their
    // class, its 224-byte Others those of theirs.
    const ofSize = (size: number) => f.classes.find((c: {size: number}) => c.size === size)
    const sameSize = (phase: 'before' | 'after', size: number) => Object.entries(truth.sizes).filter(([, s]) => s === size).reduce((n, [t]) => n + truth[phase][t]!, 0)
    for (const size of new Set(Object.values(truth.sizes))) {
      expect(ofSize(size).liveObjects.before, `size ${size}`).toBe(sameSize('before', size))
      expect(ofSize(size).liveObjects.after, `size ${size}`).toBe(sameSize('after', size))
    }

    // The page heap's free bytes and the heap's lines: toma memory's, and TCMalloc's own counters.
    const counter = (phase: 'before' | 'after', name: string) => truth[phase].phase.counters[name]!
    for (const phase of ['before', 'after'] as const) {
      expect(f.pageHeapFree.normal[phase]).toBe(mem[phase].pageHeap.normalBytes)
      expect(f.pageHeapFree.returned[phase]).toBe(mem[phase].pageHeap.returnedBytes)
      expect(f.pageHeapFree.normal[phase]).toBe(counter(phase, 'tcmalloc.pageheap_free_bytes'))
      expect(f.pageHeapFree.returned[phase]).toBe(counter(phase, 'tcmalloc.pageheap_unmapped_bytes'))
      expect(f.accounting.heap[phase]).toBe(mem[phase].accounting.heap.bytes)
      expect(f.accounting.heap[phase]).toBe(counter(phase, 'generic.heap_size'))
      const parts = mem[phase].accounting.heap.parts as Array<{part: string; bytes: number; allocator?: {property: string; bytes: number}}>
      expect(f.accounting.parts.map((l: {part: string}) => l.part)).toEqual(parts.map(l => l.part))
      for (const l of parts) {
        const line = f.accounting.parts.find((x: {part: string}) => x.part === l.part)
        expect(line[phase], l.part).toBe(l.bytes)
        if (l.allocator) expect(line[phase], l.part).toBe(counter(phase, l.allocator.property))
      }
    }
    expect(f.pageHeapFree.normal.change).toBe(counter('after', 'tcmalloc.pageheap_free_bytes') - counter('before', 'tcmalloc.pageheap_free_bytes'))
    const live = f.accounting.parts.find((l: {part: string}) => l.part.startsWith('live'))
    expect(live.change).toBe(counter('after', 'generic.current_allocated_bytes') - counter('before', 'generic.current_allocated_bytes'))
    for (const l of f.accounting.parts) expect(l.change, l.part).toBe(l.after - l.before)

    // As text: the section and the row of the class that grew most beyond its live bytes.
    const t = await runToma(['diff', before, after, ...flags], {cwd: work})
    expect(t.status, t.stderr).toBe(0)
    expect(t.stdout).toContain('Fragmentation: size classes whose spans grew beyond their live bytes first')
    const n = (v: number) => v.toLocaleString('en-US')
    const s = (v: number) => (v > 0 ? `\\+${n(v)}` : n(v))
    const top = f.classes.find((c: {spans: {change: number}}) => c.spans.change !== 0)
    const cells = [n(top.sizeClass), n(top.size), `${n(top.spans.before)} → ${n(top.spans.after)} \\(${s(top.spans.change)}\\)`, s(top.spanBytes.change)]
    expect(t.stdout).toMatch(new RegExp(`^\\s*${cells.join('\\s+')}\\s`, 'm'))
    // TCMalloc's free page-heap bytes, in KiB as the text gives them (whole KiB on this pair).
    const kib = (v: number) => `${(v / 1024).toFixed(1)} KiB`
    const [was, is] = [counter('before', 'tcmalloc.pageheap_free_bytes'), counter('after', 'tcmalloc.pageheap_free_bytes')]
    expect(t.stdout).toContain(`page heap free: normal ${kib(was)} → ${kib(is)} (${is < was ? '-' : '+'}${kib(Math.abs(is - was))})`)
  })

  it('finds nothing changed between a core and itself', async () => {
    const r = await runToma(['diff', after, after, ...flags, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const d = JSON.parse(r.stdout)
    expect(d.totals.born.objects + d.totals.died.objects).toBe(0)
    // Every live byte is kept: as many as TCMalloc counted allocated.
    expect(d.totals.kept.bytes).toBe(truth.after.phase.counters['generic.current_allocated_bytes'])
    expect(d.growth).toEqual([])
    expect(d.states.every((s: {change: {bytes: number}}) => s.change.bytes === 0)).toBe(true)
    type Figure = {change: number}
    const still = (c: Record<string, Figure | number | string>) => Object.values(c).every(v => typeof v !== 'object' || v.change === 0)
    expect(d.fragmentation.classes.length).toBeGreaterThan(0)
    expect(d.fragmentation.classes.every(still)).toBe(true)
    expect(d.fragmentation.accounting.parts.every((l: Figure) => l.change === 0)).toBe(true)
  })

  it('refuses two cores of different programs with one line', async () => {
    const other = path.join(work, 'other')
    fs.copyFileSync(await fixtureCorePath('v2.10-shared'), other)
    const r = await runToma(['diff', before, other], {cwd: work})
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/are cores of different programs .*build-id [0-9a-f]+.*build-id [0-9a-f]+/)
    // Refused before either core was analysed.
    expect(fs.existsSync(other + '.toma-index')).toBe(false)
  })
})
