import {spawnSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {pathsTo} from '../../src/queries/paths.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex, type EdgeRef} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {Program} from '../../src/program/program.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {ARM64_KERNEL_FIXTURE, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {sharedAnalysis} from '../helpers/shared-analysis.js'
import {testTemp} from '../helpers/test-temp.js'

/** A fixture core as these tests take it: the core, the flags that analyse it, its program loaded with them, the program's record. */
interface RetentionSource {
  id: string
  open(): Promise<{core: string; flags: string[]; program: Program; truth: Truth}>
}

// path, dominators, top and suspects end to end on two x86-64 fixtures and on the aarch64 kernel's
// core of the same program (issue 54: nothing above the heap layer changes); bulk checks in-process.
const chosen: RetentionSource[] = [
  ...fixtureIndex()
    .filter(f => ['v2.10-shared', 'v2.18.1-shared'].includes(f.id))
    .map(entry => ({
      id: entry.id,
      async open() {
        const f = fixtureFlags(entry)
        const core = await fixtureCorePath(entry.id)
        const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8')) as Truth
        return {core, flags: ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])], program: Program.load(Core.open(core), f), truth}
      },
    })),
  {
    id: 'arm64/heapdemo-2.10-kernel',
    async open() {
      const f = await openArm64Fixture(ARM64_KERNEL_FIXTURE)
      return {core: f.corePath, flags: ['--exe', f.exe, '--sysroot', f.sysroot], program: f.program, truth: f.truth}
    },
  },
]

describe.each(chosen.map(f => [f.id, f] as const))('why memory is held, on %s', (id, source) => {
  let work: string
  let indexPath: string
  let truth: Truth
  let index: HeapIndex
  let retention: RetentionIndex
  let program: Program
  const json = async (args: string[]) => {
    const r = await runToma([...args, indexPath, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    return JSON.parse(r.stdout)
  }

  beforeAll(async () => {
    work = testTemp(`toma-retention-${id.replace('/', '-')}-`)
    const opened = await source.open()
    ;({program, truth} = opened)
    // Every test here queries the index: the run's one analysis of this core with these flags.
    indexPath = (await sharedAnalysis(opened.core, opened.flags)).index
    index = new HeapIndex(IndexFile.open(indexPath)!)
    retention = new RetentionIndex(index)
    index.useCore(program.core.memory, opened.core)
  })
  afterAll(() => {
    index?.file.close()
    program?.core.close()
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('path: every manifest object gets a chain of real edges from a root, or its leak starts', () => {
    for (const o of truth.objects) {
      const p = pathsTo(program, index, retention, addr(o.address) + Math.floor(o.size / 2), {paths: 1})!
      expect(p.object.address, o.name).toBe(o.address)
      expect(p.reachable, o.name).toBe(!o.leaked)
      if (o.leaked) {
        expect(p.paths).toEqual([])
        expect(p.leakStarts.length, o.name).toBeGreaterThan(0)
        // The starting points are leaked objects of the manifest that reach it (a cycle names one of its members).
        for (const s of p.leakStarts) expect(truth.objects.find(x => x.address === s.address)?.leaked, `${o.name} ← ${s.address}`).toBe(true)
        continue
      }
      const chain = p.paths[0]!
      expect(chain.steps.at(-1)!.object.address).toBe(o.address)
      const first = addr(chain.steps[0]!.object.address)
      expect(index.rootsOf(index.objectAt(first)!.index).some(r => r.toOffset === chain.root.toOffset && r.kind === chain.root.kind), o.name).toBe(true)
      for (let i = 0; i + 1 < chain.steps.length; i++) {
        const from = index.objectAt(addr(chain.steps[i]!.object.address))!.index
        const to = index.objectAt(addr(chain.steps[i + 1]!.object.address))!.index
        expect(index.outEdges(from).some(e => e.to === to && e.offset === chain.steps[i]!.offset && e.toOffset === chain.steps[i]!.nextOffset), `${o.name} step ${i}`).toBe(true)
      }
      const held = o.heldBy
      if (held?.kind === 'global') {
        expect(chain.steps.length, o.name).toBe(1)
        expect(chain.root.kind).toBe('global')
        expect(chain.root.label, o.name).toContain(held.symbol)
      } else if (held?.kind === 'stack') {
        expect(chain.steps.length, o.name).toBe(1)
        expect(['stack', 'register']).toContain(chain.root.kind)
        expect(chain.root.thread, o.name).toBe(held.tid)
      }
    }
    // What hangs under the global Inventory is reached through it.
    const inventory = truth.objects.find(o => o.name === 'inventory')!
    const buf = truth.objects.find(o => o.name === 'inventory.names.node3.value.buf')!
    const p = pathsTo(program, index, retention, addr(buf.address), {paths: 1})!
    expect(p.paths[0]!.steps.map(s => s.object.address)).toContain(inventory.address)
  })

  it('edgeBetween finds the first pointer from one object to another, from whichever side is smaller', () => {
    // Against the forward edges listed whole: every edge's pair, and a pair with no edge.
    let checked = 0
    for (let from = 0; from < index.objectCount && checked < 5000; from++) {
      const out = index.outEdges(from)
      for (const e of out) {
        const first = out.find(x => x.to === e.to)!
        expect(index.edgeBetween(from, e.to)).toEqual(first)
        checked++
      }
      if (out.length > 0 && out.every(e => e.to !== from)) expect(index.edgeBetween(from, from)).toBeUndefined()
    }
    expect(checked).toBeGreaterThan(1000)
  })

  it('inEdges gives each incoming edge as the forward edges have it, by source; with a limit, and with a source left out', () => {
    // Against the forward edges listed whole: every object's incoming edges, by source, each
    // source's in its own order.
    const expected = new Map<number, EdgeRef[]>()
    for (let from = 0; from < index.objectCount; from++) {
      for (const e of index.outEdges(from)) expected.set(e.to, [...(expected.get(e.to) ?? []), e])
    }
    let checked = 0
    let repeated = 0
    for (const [to, edges] of expected) {
      expect(index.inEdges(to)).toEqual(edges)
      expect(Array.from(index.referrerIds(to))).toEqual(edges.map(e => e.from))
      expect(index.inEdges(to, 2)).toEqual(edges.slice(0, 2))
      const first = edges[0]!.from
      expect(index.inEdges(to, Infinity, first)).toEqual(edges.filter(e => e.from !== first))
      if (edges.some((e, i) => i > 0 && edges[i - 1]!.from === e.from)) repeated++
      checked += edges.length
    }
    expect(checked).toBe(index.file.array('edge.inFrom').length)
    expect(repeated, 'objects with several pointers from one source').toBeGreaterThan(0)
  })

  it('path --roots: several shortest paths from different roots, through the CLI', async () => {
    const customer = truth.objects.find(o => o.name === 'customer1')!
    const one = await json(['path', customer.address])
    expect(one.paths).toHaveLength(1)
    const many = await json(['path', customer.address, '--roots', '5'])
    expect(many.paths.length).toBeGreaterThanOrEqual(1)
    const roots = many.paths.map((p: {root: {kind: string; thread: number | null; label: string; address: string | null}}) => JSON.stringify(p.root))
    expect(new Set(roots).size).toBe(roots.length)
    expect(many.paths[0]).toEqual(one.paths[0])
    const leak = truth.objects.find(o => o.name === 'leakCycleX')!
    const lp = await json(['path', leak.address])
    expect(lp.reachable).toBe(false)
    expect(lp.leakStarts.map((s: {address: string}) => s.address).some((a: string) => [leak.address, truth.objects.find(o => o.name === 'leakCycleY')!.address].includes(a))).toBe(true)
  })

  it('dominators: the Inventory dominates its containers\' nodes and buffers', async () => {
    const inventory = truth.objects.find(o => o.name === 'inventory')!
    const d = await json(['dominators', inventory.address, '--depth', '8', '--limit', '100'])
    const below = new Set<string>()
    const walk = (n: {object: {address: string}; children: unknown[]}) => {
      below.add(n.object.address)
      for (const c of n.children) walk(c as typeof n)
    }
    walk(d.tree)
    for (const name of ['inventory.items.buf', 'inventory.names.node1', 'inventory.names.node3.value.buf', 'inventory.history.node2']) {
      expect(below.has(truth.objects.find(o => o.name === name)!.address), name).toBe(true)
    }
    const items = index.objectAt(addr(truth.objects.find(o => o.name === 'inventory.items.buf')!.address))!
    expect(retention.idom(items.index)).toBe(index.objectAt(addr(inventory.address))!.index)
    expect(d.tree.retainedBytes).toBe(retention.retained(index.objectAt(addr(inventory.address))!.index).bytes)
  })

  it('top and suspects: the largest holders, by object and by type', async () => {
    const top = await json(['top', '--limit', '50'])
    const sizes = top.objects.map((o: {retainedBytes: number}) => o.retainedBytes)
    expect(sizes).toEqual([...sizes].sort((a: number, b: number) => b - a))
    const big = truth.objects.find(o => o.name === 'big3m')!
    expect(top.objects.find((o: {address: string}) => o.address === big.address)?.retainedBytes).toBeGreaterThanOrEqual(big.size)
    const byType = await json(['top', '--by', 'type'])
    // Groups of untyped blocks rank among the types (type null), and so do the other tiers' names
    // (the program's std::map nodes together): the order of the fixture's own classes is checked here.
    const classes = new Set(truth.objects.map(o => o.class))
    byType.types = byType.types.filter((r: {type: string | null}) => r.type !== null && classes.has(r.type))
    const suspects = await json(['suspects', '--threshold', '10'])
    for (const s of suspects.singles) expect(s.share).toBeGreaterThanOrEqual(0.1)
    const listed = top.objects.filter((o: {share: number; reachable: boolean}) => o.share >= 0.1 && o.reachable).map((o: {address: string}) => o.address)
    expect(suspects.singles.map((s: {object: {address: string}}) => s.object.address)).toEqual(listed)
    const acc = truth.accumulation
    if (!acc) throw new Error('truth.accumulation missing: the fixture program records its registry')
    // Each byte once per type: the holder's type counts what it holds, so it ranks first, and the
    // accumulated type right after it with exactly its objects' own bytes (none holds another).
    expect(byType.types[0].type).toBe(acc.holderClass)
    expect(byType.types[1].type).toBe(acc.type)
    const sessions = truth.live.filter(([a]) => index.type(index.objectAt(addr(a))!.index) === acc.type)
    expect(sessions).toHaveLength(acc.count)
    expect(byType.types[1].retainedObjects).toBe(acc.count)
    expect(byType.types[1].retainedBytes).toBe(sessions.reduce((n, [a]) => n + index.objectAt(addr(a))!.size, 0))
    const holder = suspects.singles.find((s: {object: {address: string}}) => s.object.address === acc.holder)
    expect(holder, 'the registry is a suspect').toBeDefined()
    expect(holder.path.root.label).toContain(acc.symbol)
    expect(holder.accumulated[0].group).toBe(acc.type)
    expect(holder.accumulated[0].objects).toBe(acc.count)
    expect(holder.accumulated[0].bytes).toBe(byType.types[1].retainedBytes)
    // The tally is whole: every object under the point, each group's bytes its objects' own sizes,
    // as a walk of the stored dominator tree counts them.
    expect(holder.counted).toBe(holder.accumulationPoint.retainedObjects - 1)
    for (const a of index.meta.accumulations) {
      const groups = new Map<string, {objects: number; bytes: number}>()
      let objects = 0
      const stack = [...retention.children(a.point)]
      while (stack.length) {
        const o = stack.pop()!
        objects++
        const t = index.type(o)
        const key = t ?? `(untyped, ${index.object(o).size} B class)`
        const g = groups.get(key) ?? {objects: 0, bytes: 0}
        g.objects++
        g.bytes += index.object(o).size
        groups.set(key, g)
        stack.push(...retention.children(o))
      }
      expect(a.objects).toBe(objects)
      for (const g of a.groups) {
        const want = groups.get(g.type > 0 ? index.typeName(g.type)! : `(untyped, ${g.size} B class)`)
        expect({objects: g.objects, bytes: g.bytes}).toEqual(want)
      }
      const largest = Math.max(...[...groups.values()].map(g => g.bytes))
      expect(a.groups[0]?.bytes ?? 0).toBe(groups.size ? largest : 0)
    }
  })

  it('top counts the whole top level (not the index\'s ranked 1,000), --limit 0 lists it all in order, and the text says where it is cut', async () => {
    // Independent count: the exported live objects without an immediate dominator.
    const r = await runToma(['export', '--format', 'json', indexPath], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const exported = JSON.parse(r.stdout)
    const atTop = exported.objects.filter((o: {dominator?: number | null}) => o.dominator === null)
    const all = await json(['top', '--limit', '0'])
    expect(all.of).toBe(atTop.length)
    expect(all.listed).toBe(atTop.length)
    expect(all.objects.map((o: {id: number}) => o.id).sort((a: number, b: number) => a - b)).toEqual(atTop.map((o: {id: number}) => o.id).sort((a: number, b: number) => a - b))
    const sizes = all.objects.map((o: {retainedBytes: number}) => o.retainedBytes)
    expect(sizes).toEqual([...sizes].sort((a: number, b: number) => b - a))
    // The index ranks the first 1,000 itself: the ranking past them goes on from them.
    const ranked = await json(['top', '--limit', '1000'])
    expect(all.objects.slice(0, 1000)).toEqual(ranked.objects)
    const text = await runToma(['top', '--limit', '3', indexPath], {cwd: work})
    expect(text.stdout).toContain(`Objects retaining the most: ${atTop.length.toLocaleString('en-US')} objects held directly by roots or starting a leak (first 3 of ${atTop.length.toLocaleString('en-US')} shown)`)
    const types = await json(['top', '--by', 'type', '--limit', '0'])
    expect(types.listed).toBe(types.of)
    // suspects counts leaks as leaks does: TCMalloc's own unreferenced allocation starts none.
    const suspects = await json(['suspects'])
    const leaks = await json(['leaks'])
    if (id === 'v2.10-shared') expect(leaks.allocatorInternal.objects).toBe(1)
    expect(suspects.leakStarts).toBe(leaks.startCount)
    expect(suspects.leakedBytes).toBe(leaks.bytes)
  })

  it('one way to write each figure: refs, path, stack and find-object give an object\'s kind, size and offsets alike', async () => {
    const big = truth.objects.find(o => o.name === 'big3m')!
    const text = async (args: string[]) => {
      const r = await runToma([...args, indexPath], {cwd: work})
      expect(r.status, r.stderr).toBe(0)
      return r.stdout
    }
    const size = `${big.size.toLocaleString('en-US')} B`
    const refs = await text(['refs', big.address])
    const path = await text(['path', big.address])
    expect(refs).toContain(`(untyped, large) ${size}`)
    expect(path).toContain(`object ${big.address} (untyped, large) ${size}`)
    expect(await text(['find-object', big.address])).toContain(`size ${size}  size class none`)
    // Offsets are hex wherever they are written (as symbol+0x… is).
    for (const out of [refs, path]) {
      expect(out).toMatch(/→ \+0x[0-9a-f]+/)
      expect(out).not.toMatch(/[ .]\+\d+\b(?!x)/)
    }
    // An accumulation point's untyped groups are named as their objects are.
    const suspects = await json(['suspects', '--threshold', '1'])
    for (const s of suspects.singles) for (const g of s.accumulated) expect(g.group).toMatch(/^(?!\(untyped)|^\(untyped, (class \d+|large, [\d,]+ B each)\)$/)
  })

  it('export, leaks, classes and find-object say why objects are held', async () => {
    const out = path.join(work, 'graph.json')
    const r = await runToma(['export', indexPath, '--format', 'json', '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const graph = JSON.parse(fs.readFileSync(out, 'utf8'))
    const byAddress = new Map<string, {id: number; size: number; reachable: boolean; retained: number; dominator: number | null}>(graph.objects.map((o: {address: string}) => [o.address, o]))
    const byId = new Map(graph.objects.map((o: {id: number}) => [o.id, o]))
    for (const o of graph.objects) {
      expect(o.retained).toBeGreaterThanOrEqual(o.size)
      if (o.dominator !== null) {
        const d = byId.get(o.dominator) as {reachable: boolean; retained: number}
        expect(d.reachable).toBe(o.reachable)
        expect(d.retained).toBeGreaterThan(o.retained - 1)
      }
    }
    for (const o of truth.objects) expect(byAddress.get(o.address)!.reachable, o.name).toBe(!o.leaked)
    const inventory = byAddress.get(truth.objects.find(o => o.name === 'inventory')!.address)!
    expect(byAddress.get(truth.objects.find(o => o.name === 'inventory.items.buf')!.address)!.dominator).toBe(inventory.id)

    const leaks = await json(['leaks'])
    const starts = leaks.starts.map((s: {address: string}) => s.address)
    for (const name of ['leakRaw', 'leakOverwritten']) expect(starts, name).toContain(truth.objects.find(o => o.name === name)!.address)
    const cycle = ['leakCycleX', 'leakCycleY'].map(n => truth.objects.find(o => o.name === n)!)
    expect(cycle.filter(c => starts.includes(c.address))).toHaveLength(1)
    const cycleStart = leaks.starts.find((s: {address: string}) => cycle.some(c => c.address === s.address))
    expect(cycleStart.retainedBytes).toBe(cycle.reduce((n, c) => n + byAddress.get(c.address)!.size, 0))
    expect(leaks.starts.reduce((n: number, s: {retainedBytes: number}) => n + s.retainedBytes, 0)).toBe(leaks.bytes)

    const classes = await json(['classes'])
    const inv = classes.types.find((t: {type: string}) => t.type === 'app::Inventory')
    expect(inv.retainedBytes).toBe(inventory.retained)

    const info = await json(['find-object', truth.objects.find(o => o.name === 'inventory.items.buf')!.address])
    expect(info.object.held.reachable).toBe(true)
    expect(info.object.held.immediateDominator.address).toBe(truth.objects.find(o => o.name === 'inventory')!.address)
    const leakInfo = await json(['find-object', truth.objects.find(o => o.name === 'leakRaw')!.address])
    expect(leakInfo.object.held).toMatchObject({reachable: false, immediateDominator: null})
  })

  it('export --format dot --dominators draws what an object keeps alive, and Graphviz renders it', async () => {
    const inventory = truth.objects.find(o => o.name === 'inventory')!
    const r = await runToma(['export', indexPath, '--format', 'dot', '--around', inventory.address, '--dominators', '--depth', '6'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const id = (name: string) => index.objectAt(addr(truth.objects.find(o => o.name === name)!.address))!.index
    const edges = [...r.stdout.matchAll(/^ {2}o(\d+) -> o(\d+);$/gm)].map(m => [Number(m[1]), Number(m[2])] as const)
    // Each arrow is an immediate-dominator edge of the index, from the Inventory down.
    const publicId = new Map<number, number>()
    for (const name of ['inventory', 'inventory.items.buf', 'inventory.names.node1', 'inventory.names.node3.value.buf']) {
      const brief = JSON.parse((await runToma(['find-object', truth.objects.find(o => o.name === name)!.address, indexPath, '--json'], {cwd: work})).stdout)
      publicId.set(id(name), brief.object.id)
    }
    for (const name of ['inventory.items.buf', 'inventory.names.node1', 'inventory.names.node3.value.buf']) {
      expect(r.stdout, name).toMatch(new RegExp(`^  o${publicId.get(id(name))} \\[`, 'm'))
    }
    expect(edges).toContainEqual([publicId.get(id('inventory')), publicId.get(id('inventory.items.buf'))])
    const dot = spawnSync('dot', ['-Tsvg'], {input: r.stdout, encoding: 'utf8'})
    if (dot.error) {
      console.log('skipped the rendering check: Graphviz (dot) is not installed')
      return
    }
    expect(dot.status, dot.stderr).toBe(0)
    expect(dot.stdout).toContain('<svg')
  })
})
