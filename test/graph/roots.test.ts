import fs from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PF_W} from '../../src/core/core-header.js'
import {ALLOCATOR_INTERNAL, allocatorObjects, markAllocatorInternal, REACHED, UNREACHED} from '../../src/graph/allocator-internal.js'
import {outEdges, ROOT_CACHED_STACK, ROOT_GLOBAL, ROOT_KIND_NAMES, ROOT_MAPPING, ROOT_REGISTER, ROOT_STACK, ROOT_TLS, rootsOf} from '../../src/graph/csr.js'
import {nameObjects} from '../../src/graph/object-types.js'
import {reachableFromRoots} from '../../src/graph/reachability.js'
import {parseRootKinds} from '../../src/graph/root-kinds.js'
import {scanHeapGraph, type ScannedGraph} from '../../src/graph/scan.js'
import {TypeNamer} from '../../src/graph/types.js'
import type {Program} from '../../src/program/program.js'
import {objectAt} from '../../src/heap/objects.js'
import {analyzeTcmalloc, withModel, type TcmallocHeapModel} from '../helpers/tcmalloc-heap.js'
import {LIVE} from '../../src/heap/states.js'
import {SPAN} from '../../src/tcmalloc/layout.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, openFixture, type HeldBy, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {failing} from '../helpers/failing.js'
import {testTempFile} from '../helpers/test-temp.js'

const fixtures = fixtureIndex()

/** Live objects no root reaches, by address. */
function unreachedAddresses(heap: TcmallocHeapModel, reached: Uint8Array): Set<number> {
  const out = new Set<number>()
  const s = heap.spans
  for (let i = 0; i < s.count; i++) {
    for (let k = 0; k < s.objectCount[i]!; k++) {
      const o = s.firstObject[i]! + k
      if (heap.state[o] === LIVE && reached[o] === UNREACHED) out.add(s.start[i]! + k * s.objectSize[i]!)
    }
  }
  return out
}

function slotOf(heap: TcmallocHeapModel, a: number): number {
  const o = objectAt(heap, a)
  if (!o || o.start !== a) throw new Error(`no object starts at ${a.toString(16)}`)
  return o.index
}

/** TCMalloc's metadata as the test finds it on its own: span records, thread caches, page-map nodes and leaves. */
function metadataIntervals(program: Program, heap: TcmallocHeapModel): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = []
  for (let s = 0; s < heap.spans.count; s++) out.push([heap.spans.record[s]!, heap.spans.record[s]! + SPAN.size, 'span record'])
  for (const c of heap.threadCaches) out.push([c.address, c.address + heap.globals.layout.threadCache.objectSize, 'thread cache'])
  const pm = heap.globals.layout.pageMap
  if (pm.kind === 2) {
    const rootAt = heap.globals.pageHeap + heap.globals.layout.pageHeap.pagemap
    for (let i = 0; i < 2 ** pm.rootBits; i++) {
      const leaf = program.core.memory.readU64(rootAt + i * 8)
      if (leaf) out.push([leaf, leaf + 2 ** pm.leafBits * 8, 'page-map leaf'])
    }
  } else {
    // PageMap3 (≤ 2.5): root_ points to an interior node, whose entries point to interior nodes of leaves.
    const read = (a: number) => program.core.memory.readU64(a) ?? 0
    const nodeBytes = 2 ** pm.interiorBits * 8
    const root = read(heap.globals.pageHeap + heap.globals.layout.pageHeap.pagemap)
    out.push([root, root + nodeBytes, 'page-map node'])
    for (let i = 0; i < 2 ** pm.interiorBits; i++) {
      const node = read(root + i * 8)
      if (!node) continue
      out.push([node, node + nodeBytes, 'page-map node'])
      for (let j = 0; j < 2 ** pm.interiorBits; j++) {
        const leaf = read(node + j * 8)
        if (leaf) out.push([leaf, leaf + 2 ** pm.leafBits * 8, 'page-map leaf'])
      }
    }
  }
  return out
}

describe.each(fixtures.map(f => [f.id] as const))('root set on %s', id => {
  let program: Program
  let truth: Truth
  let heap: TcmallocHeapModel
  let graph: ScannedGraph
  let strict: ScannedGraph

  beforeAll(async () => {
    ;({program, truth} = await openFixture(id))
    heap = analyzeTcmalloc(program)
    graph = scanHeapGraph(program, heap)
    strict = scanHeapGraph(program, heap, {rootKinds: parseRootKinds('registers,stacks,globals')})
  })
  afterAll(() => program.core.close())

  it("scans no heap span and none of TCMalloc's metadata (span records, thread caches, page-map leaves)", () => {
    const metadata = metadataIntervals(program, heap)
    expect(metadata.some(([, , what]) => what === 'page-map leaf')).toBe(true)
    const s = heap.spans
    for (const r of graph.roots.ranges) {
      const spans = failing(s.count, i => !(r.start < s.start[i]! + s.pages[i]! * heap.pageSize && r.end > s.start[i]!))
      expect(spans, `${r.label}: spans it overlaps`).toEqual([])
      const places = failing(metadata.length, k => !(r.start < metadata[k]![1] && r.end > metadata[k]![0])).map(k => `a ${metadata[k]![2]} at ${metadata[k]![0].toString(16)}`)
      expect(places, `${r.label} ${r.start.toString(16)}: metadata it overlaps`).toEqual([])
    }
  })

  it("never scans the ThreadCache the exited thread freed (on threadcache_allocator's free list, with stale lists)", () => {
    const allocator = program.symbolAddress('_ZN8tcmalloc21threadcache_allocatorE')!.address
    const freed: number[] = []
    for (let p = program.core.memory.readU64(allocator + 16)!; p !== 0 && freed.length < 64; p = program.core.memory.readU64(p)!) freed.push(p)
    expect(freed.length).toBeGreaterThanOrEqual(1)
    expect(heap.threadCaches.map(c => c.address)).not.toContain(freed[0])
    const size = heap.globals.layout.threadCache.objectSize
    for (const f of freed) for (const r of graph.roots.ranges) expect(r.start < f + size && r.end > f, `${r.label} overlaps freed cache ${f.toString(16)}`).toBe(false)
  })

  it('covers every writable byte once: root ranges, heap and metadata, dead stack below rsp', () => {
    const ranges = graph.roots.ranges
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.start).toBeGreaterThanOrEqual(ranges[i - 1]!.end)
    const writable = program.core.memory.segments.filter(seg => seg.flags & PF_W).reduce((n, seg) => n + seg.end - seg.start, 0)
    const scanned = ranges.reduce((n, r) => n + r.end - r.start, 0)
    expect(scanned + graph.roots.excluded.allocator + graph.roots.excluded.deadStack).toBe(writable)
    expect(ranges.some(r => ROOT_KIND_NAMES[r.kind] === 'mapping')).toBe(true)
  })

  it("scans the main thread's TLS block and TCB (at its fs_base, apart from its stack)", () => {
    const main = program.core.threads.find(t => t.tid === truth.threads.find(x => x.role === 'main')?.tid) ?? program.core.threads[0]!
    const tls = graph.roots.ranges.filter(r => r.kind === ROOT_TLS && r.thread === main.tid)
    expect(tls.some(r => r.start <= main.threadPointer! && main.threadPointer! < r.end), `TLS ranges ${tls.map(r => r.label)}`).toBe(true)
    expect(program.core.stackSegment(main)!.start > main.threadPointer! || program.core.stackSegment(main)!.end <= main.threadPointer!).toBe(true)
  })

  it('with --roots registers,stacks,globals scans only those, and leaks a superset of the default', () => {
    const kinds = [ROOT_REGISTER, ROOT_STACK, ROOT_GLOBAL]
    expect(failing(strict.rootCount, r => kinds.includes(strict.rootKind[r]!)).map(r => strict.rootKind[r]), 'roots of another kind').toEqual([])
    expect(graph.rootCount).toBeGreaterThan(strict.rootCount)
    const all = unreachedAddresses(heap, reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo))
    const few = unreachedAddresses(heap, reachableFromRoots(strict.objectCount, strict.outStart, strict.outTo, strict.rootTo))
    expect([...all].filter(a => !few.has(a)), 'leaked by default, reached with fewer roots').toEqual([])
  })

  it('reaches the objects whose only pointers are in an mmap pool, from mapping roots at the slots the program wrote', () => {
    const pool = truth.pool
    const held = truth.objects.filter(o => o.heldBy?.kind === 'mapping')
    expect(held.map(o => o.name).sort()).toEqual(['poolHeld0', 'poolHeld1', 'poolHeld2'])
    const reached = reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
    for (const o of held) {
      const h = o.heldBy as Extract<HeldBy, {kind: 'mapping'}>
      expect(h.start).toBe(pool.start)
      const slot = slotOf(heap, addr(o.address))
      const {start, end} = rootsOf(graph, slot)
      const at: number[] = []
      for (let r = start; r < end; r++) if (graph.rootKind[r] === ROOT_MAPPING) at.push(graph.rootAddress[r]!)
      expect(at, o.name).toEqual([addr(h.start) + h.offset])
      const region = graph.roots.ranges.find(r => r.start <= at[0]! && at[0]! < r.end)!
      expect(region.label).toBe(`anonymous mapping ${pool.start}-${pool.end}`)
      expect(reached[slot], o.name).toBe(REACHED)
    }
    // poolChild: no root of its own, reached through poolHeld0's pointer.
    const child = slotOf(heap, addr(truth.objects.find(o => o.name === 'poolChild')!.address))
    const roots = rootsOf(graph, child)
    expect(roots.end - roots.start).toBe(0)
    expect(reached[child]).toBe(REACHED)
    const parent = slotOf(heap, addr(truth.objects.find(o => o.name === 'poolHeld0')!.address))
    const out = outEdges(graph, parent)
    expect(Array.from(graph.outTo.subarray(out.start, out.end))).toContain(child)
  })

  it("reaches the object whose only pointer is on an exited thread's stack, from a cached-stack root in that stack", () => {
    const exited = truth.exitedThread
    expect(program.core.threads.some(t => t.tid === exited.tid)).toBe(false)
    const o = truth.objects.find(x => x.name === 'exitedThreadHeld')!
    expect(o.heldBy?.kind).toBe('cachedStack')
    const slot = slotOf(heap, addr(o.address))
    const {start, end} = rootsOf(graph, slot)
    const at: number[] = []
    for (let r = start; r < end; r++) if (graph.rootKind[r] === ROOT_CACHED_STACK) at.push(graph.rootAddress[r]!)
    expect(at.length).toBeGreaterThan(0)
    for (const a of at) {
      expect(a).toBeGreaterThanOrEqual(addr(exited.stackStart))
      expect(a).toBeLessThan(addr(exited.stackEnd))
      const region = graph.roots.ranges.find(r => r.start <= a && a < r.end)!
      expect(region.end).toBe(addr(exited.stackEnd))
      expect(region.label).toMatch(/stack of exited thread \(TCB 0x[0-9a-f]+\)$/)
    }
    expect(reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)[slot]).toBe(REACHED)
  })

  it('leaks the pool-held and exited-stack-held objects again with --roots registers,stacks,globals', () => {
    const reached = reachableFromRoots(strict.objectCount, strict.outStart, strict.outTo, strict.rootTo)
    for (const name of ['poolHeld0', 'poolHeld1', 'poolHeld2', 'poolChild', 'exitedThreadHeld']) {
      const slot = slotOf(heap, addr(truth.objects.find(o => o.name === name)!.address))
      expect(reached[slot], name).toBe(UNREACHED)
    }
  })

  it("marks TCMalloc's own unreferenced allocations (the MallocExtension singleton) allocator-internal, nothing of the program's", () => {
    const types = nameObjects(graph.firstWords, new TypeNamer(program))
    const reached = reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
    const before = unreachedAddresses(heap, reached)
    markAllocatorInternal(allocatorObjects(heap, graph.firstWords, types, program.core.memory), reached, {outStart: graph.outStart, outTo: graph.outTo})
    const after = unreachedAddresses(heap, reached)
    const recorded = new Set(truth.live.map(([a]) => addr(a)))
    const internal = [...before].filter(a => !after.has(a))
    // Exactly the unreached allocations the program did not make (made before its hooks: TCMalloc's own).
    expect(internal.sort()).toEqual([...before].filter(a => !recorded.has(a)).sort())
    expect([...after].sort()).toEqual(truth.objects.filter(o => o.leaked).map(o => addr(o.address)).sort())
    const stateIsKnown = (o: number) =>
      reached[o] === ALLOCATOR_INTERNAL ? /MallocExtension|its subgraph/.test(types.names[types.typeOf[o]! - 1] ?? 'its subgraph') : reached[o] === UNREACHED || reached[o] === REACHED
    expect(failing(reached.length, stateIsKnown).map(o => [o, reached[o], types.names[types.typeOf[o]! - 1]]), "TCMalloc's own not MallocExtension's, or another state").toEqual([])
    // gperftools before 2.16 leaks the default instance it replaces; the fixtures of 2.16 and later have none.
    if (/^2\.(8|10)\./.test(`${truth.gperftools}.`)) expect(internal.length).toBe(1)
  })
})

// Without module files no type is named: the default MallocExtension instance (gperftools < 2.16
// leaks it by design) is known by its 8-byte slot and the vtable it points to in libtcmalloc's
// data. Expected: the one object the analysis with the files names MallocExtension, and no other.
describe.each(fixtures.filter(f => ['v2.10-shared', 'v2.8.1-shared', 'v2.16-shared'].includes(f.id)).map(f => [f.id] as const))("TCMalloc's own allocation without module files, %s", id => {
  it('is the object the files name MallocExtension, and nothing else is marked', async () => {
    const typed = await openFixture(id)
    const typedHeap = analyzeTcmalloc(typed.program)
    const typedGraph = scanHeapGraph(typed.program, typedHeap)
    const typedTypes = nameObjects(typedGraph.firstWords, new TypeNamer(typed.program))
    const extension = allocatorObjects(typedHeap, typedGraph.firstWords, typedTypes, typed.program.core.memory)
    const named = [...extension].filter(o => typedTypes.names[typedTypes.typeOf[o]! - 1] === 'MallocExtension')
    typed.program.core.close()

    const bare = await openFixture(id)
    for (const m of bare.program.modules) m.file = null
    const heap = analyzeTcmalloc(bare.program)
    const graph = scanHeapGraph(bare.program, heap)
    const types = nameObjects(graph.firstWords, new TypeNamer(bare.program))
    const found = allocatorObjects(heap, graph.firstWords, types, bare.program.core.memory)
    bare.program.core.close()
    expect(types.typed).toBe(0)
    expect([...found]).toEqual(named)
    if (id === 'v2.16-shared') expect(named).toEqual([])
    else expect(named).toHaveLength(1)
  })
})

describe.skipIf(!fixtures.some(f => f.id === 'v2.10-shared'))('--roots and allocator-internal objects through the CLI', () => {
  const entry = fixtures.find(f => f.id === 'v2.10-shared')!
  const index = testTempFile(`toma-roots-${process.pid}.idx`)

  it('analyze --roots names the kinds used and the bytes each scanned; leaks leaves the MallocExtension singleton out', async () => {
    const flags = fixtureFlags(entry)
    const core = await fixtureCorePath(entry.id)
    const strict = await runToma(['analyze', core, '--exe', flags.exe, '--tcmalloc', flags.tcmalloc!, '--index', index, '--roots', 'registers,stacks,globals', '--json'])
    expect(strict.status, strict.stderr).toBe(0)
    const s = JSON.parse(strict.stdout)
    expect(s.graph.roots.filter((r: {used: boolean}) => r.used).map((r: {option: string}) => r.option)).toEqual(['registers', 'stacks', 'globals'])
    for (const r of s.graph.roots) expect(r.used ? r.scannedBytes > 0 : r.scannedBytes === 0 && r.count === 0, r.kind).toBe(true)

    const all = await runToma(['analyze', core, '--exe', flags.exe, '--tcmalloc', flags.tcmalloc!, '--index', index])
    expect(all.status, all.stderr).toBe(0)
    expect(all.stdout).toMatch(/roots \(--roots registers,stacks,globals,tls,mappings,cached-stacks\): .* tls \(/)
    expect(all.stdout).toMatch(/not counted: 1 unreferenced allocation of TCMalloc itself \(\d+ B; e\.g\. its MallocExtension singleton, a sampled object's proxy\)/)
    const leaks = await runToma(['leaks', index, '--json'])
    expect(leaks.status, leaks.stderr).toBe(0)
    const l = JSON.parse(leaks.stdout)
    const {truth} = await openFixture(entry.id)
    expect(l.allocatorInternal.objects).toBe(1)
    expect(l.objects).toBe(truth.objects.filter(o => o.leaked).length)
  })

  it('refs names a pool root by its mapping and offset, and a cached-stack root by the exited thread', async () => {
    const {truth} = await openFixture(entry.id)
    const held = truth.objects.find(o => o.name === 'poolHeld0')!
    const h = held.heldBy as Extract<HeldBy, {kind: 'mapping'}>
    const r = await runToma(['refs', held.address, index, '--json'])
    expect(r.status, r.stderr).toBe(0)
    const roots = JSON.parse(r.stdout).roots as Array<{kind: string; label: string}>
    expect(roots).toEqual([expect.objectContaining({kind: 'mapping', label: `anonymous mapping ${h.start}-${h.end} +0x${h.offset.toString(16)}`})])
    const exited = truth.objects.find(o => o.name === 'exitedThreadHeld')!
    const e = await runToma(['refs', exited.address, index, '--json'])
    expect(e.status, e.stderr).toBe(0)
    const eroots = JSON.parse(e.stdout).roots as Array<{kind: string; label: string}>
    expect(eroots.length).toBeGreaterThan(0)
    for (const x of eroots) expect(x.label).toMatch(/^(cached )?stack of exited thread \(TCB 0x[0-9a-f]+\) \+0x[0-9a-f]+$/)
  })

  it("find-object says a pool slot is scanned as a mapping root; refs names a stack root by its own thread's rsp", async () => {
    const {truth} = await openFixture(entry.id)
    const held = truth.objects.find(o => o.name === 'poolHeld1')!
    const h = held.heldBy as Extract<HeldBy, {kind: 'mapping'}>
    const slot = `0x${(addr(h.start) + h.offset).toString(16)}`
    const f = await runToma(['find-object', slot, index, '--json'])
    expect(f.status, f.stderr).toBe(0)
    expect(JSON.parse(f.stdout).root).toEqual({kind: 'mapping', label: `anonymous mapping ${h.start}-${h.end} +0x${h.offset.toString(16)}`})
    // Worker stacks share one mapping in these cores: a stack root's label must follow its own
    // thread, for the last worker's (worker 3 keeps objects from a volatile array on its stack) too.
    const workers = truth.threads.filter(t => t.role !== 'main').map(t => t.tid)
    const tid = workers[workers.length - 1]!
    const graphFile = testTempFile(`toma-roots-graph-${process.pid}.json`)
    expect((await runToma(['export', index, '--format', 'json', '-o', graphFile])).status).toBe(0)
    const g = JSON.parse(fs.readFileSync(graphFile, 'utf8')) as {objects: Array<{address: string}>; roots: Array<{kind: string; thread: number; to: number}>}
    fs.rmSync(graphFile)
    const root = g.roots.find(x => x.kind === 'stack' && x.thread === tid)!
    const r = await runToma(['refs', g.objects[root.to]!.address, index, '--json'])
    expect(r.status, r.stderr).toBe(0)
    const labels = (JSON.parse(r.stdout).roots as Array<{kind: string; thread: number; label: string}>).filter(x => x.kind === 'stack' && x.thread === tid).map(x => x.label)
    expect(labels.length).toBeGreaterThan(0)
    // Named by its own thread's frame: the frame number, the function, the offset from the frame's CFA.
    for (const l of labels) expect(l).toMatch(new RegExp(`^thread ${tid} #\\d+ .+, CFA-0x[0-9a-f]+$`))
  })

  it('a bad --roots list is one line on stderr that names the kinds, and a non-zero exit', async () => {
    const r = await runToma(['analyze', await fixtureCorePath(entry.id), '--index', index, '--roots', 'registers,heap'])
    expect(r.status).not.toBe(0)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toContain("unknown root kind 'heap' (the kinds are registers, stacks, globals, tls, mappings, cached-stacks)")
  })
})

describe.skipIf(!fixtures.some(f => f.id === 'v2.10-shared'))('the root set when span_allocator_ cannot be found', () => {
  it('cuts 128 KiB around every span record instead, says so, and the leaks stay exactly the manifest\'s', async () => {
    const {program, truth} = await openFixture('v2.10-shared')
    const heap = analyzeTcmalloc(program)
    // The allocator's position is derived from central_cache_'s (the symbol is hidden in Debian's
    // build): moving that by a word makes the PageHeapAllocator there fail its checks.
    const displaced = withModel({...heap, globals: {...heap.globals, centralCache: heap.globals.centralCache + 8}})
    const graph = scanHeapGraph(program, displaced)
    expect(graph.warnings.list.some(w => w.kind === 'metadata' && w.message.startsWith('span_allocator_'))).toBe(true)
    expect(graph.roots.how.some(h => h.startsWith('span_allocator_:') && h.includes('conservative'))).toBe(true)
    for (const r of graph.roots.ranges) {
      for (let s = 0; s < heap.spans.count; s++) {
        const rec = heap.spans.record[s]!
        expect(r.start < rec + 128 * 1024 && r.end > rec - 128 * 1024, r.label).toBe(false)
      }
    }
    const reached = reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
    const recorded = new Set(truth.live.map(([a]) => addr(a)))
    expect([...unreachedAddresses(heap, reached)].filter(a => recorded.has(a)).sort()).toEqual(truth.objects.filter(o => o.leaked).map(o => addr(o.address)).sort())
    program.core.close()
  })
})
