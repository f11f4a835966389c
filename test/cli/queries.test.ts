import fs from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {ROOT_KIND_NAMES} from '../../src/graph/csr.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {objectInfo} from '../../src/analysis/object-info.js'
import {refsOf} from '../../src/analysis/refs.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {Program} from '../../src/program/program.js'
import {testTemp} from '../helpers/test-temp.js'

// The query commands end to end, as a user runs them, on one fixture of each layout group.
const chosen = fixtureIndex().filter(f => ['v2.10-shared', 'v2.10-stripped', 'v2.18.1-shared'].includes(f.id))

describe.each(chosen.map(f => [f.id, f] as const))('queries on %s', (id, entry) => {
  let work: string
  let core: string
  let truth: Truth
  const flags = () => {
    const f = fixtureFlags(entry)
    return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
  }
  const json = async (args: string[]) => {
    const r = await runToma([...args, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    return JSON.parse(r.stdout)
  }
  // Bulk checks ask the same code the commands use, in-process; a few go through the CLI.
  let index: HeapIndex
  let program: Program

  beforeAll(async () => {
    work = testTemp(`toma-q-${id}-`)
    core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(id), core)
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, id, 'truth.json'), 'utf8'))
    const a = await json(['analyze', core, ...flags()])
    expect(a.crossCheck.every((c: {equal: boolean}) => c.equal)).toBe(true)
    expect(fs.existsSync(core + '.toma-index')).toBe(true)
    index = new HeapIndex(IndexFile.open(core + '.toma-index')!)
    program = Program.load(Core.open(core), fixtureFlags(entry))
  })

  it('find-object: every manifest object, from any address inside it', async () => {
    const cli = await json(['find-object', truth.objects[0]!.address, core])
    expect(cli.object.address).toBe(truth.objects[0]!.address)
    for (const o of truth.objects) {
      const inside = addr(o.address) + Math.floor(o.size / 2)
      const r = objectInfo(program, index, inside, false)
      if (!r.heap) throw new Error(`${o.name} not in the heap`)
      expect(r.heap).toBe(true)
      expect(r.object.address).toBe(o.address)
      expect(r.object.offset).toBe(inside - addr(o.address))
      expect(r.object.state).toBe('live')
      expect(r.object.type).toBe(o.class)
    }
  })

  it('find-object: addresses outside the heap name their place', async () => {
    const global = truth.magic.find(m => m.where === 'global')!
    const g = await json(['find-object', global.address, core])
    expect(g.heap).toBe(false)
    expect(g.place.kind).toBe('module')
    expect(path.basename(g.place.module)).toBe('heapdemo')
    const stack = truth.magic.find(m => m.where === 'stack')!
    const s = await json(['find-object', stack.address, core])
    expect(s.place.kind).toBe('stack')
    expect(s.place.tid).toBe(truth.threads.find(t => t.role === 'main')!.tid)
  })

  it('find-object --strings: a long std::string buffer and its owner', async () => {
    const owner = truth.objects.find(o => o.name === 'customer1')!
    const buf = truth.objects.find(o => o.name === 'customer1.address.buf')!
    const field = owner.pointers.find(p => p.to === buf.address)!
    const r = await json(['find-object', buf.address, core, '--strings'])
    expect(r.object.strings.stdString.owner).toBe(addr(owner.address))
    expect(r.object.strings.stdString.offset).toBe(field.offset)
    expect(r.object.strings.stdString.length).toBe(r.object.strings.cString.length)
  })

  it('refs: objects held only by a stack or a global show that root; every manifest pointer is an incoming edge', async () => {
    const stackHeld = truth.objects.find(o => o.heldBy?.kind === 'stack')!
    const viaCli = await json(['refs', stackHeld.address, core, '--in'])
    expect(viaCli.roots.map((x: {kind: string}) => x.kind)).toContain('stack')
    for (const o of truth.objects) {
      const r = refsOf(program, index, addr(o.address), {incoming: true, outgoing: false, depth: 1, limit: 1000})!
      for (const other of truth.objects) {
        for (const p of other.pointers.filter(p => p.to === o.address && other.address !== o.address)) {
          expect(r.incoming.some((e: {from: {address: string}; offset: number; toOffset: number}) => e.from.address === other.address && e.offset === p.offset && e.toOffset === p.toOffset), `${other.name}+${p.offset} → ${o.name}`).toBe(true)
        }
      }
      if (o.heldBy?.kind === 'stack') {
        expect(r.roots.some(x => x.kind === 'stack' && x.thread === (o.heldBy as {tid: number}).tid)).toBe(true)
        expect(r.incomingCount).toBe(0)
      }
      if (o.heldBy?.kind === 'global' && entry.config !== 'stripped') {
        const symbol = (o.heldBy as {symbol: string}).symbol
        expect(r.roots.some((x: {kind: string; label: string}) => x.kind === 'global' && x.label.startsWith(symbol))).toBe(true)
      }
    }
  })

  it('export json: the contract holds and the live set is the truth', async () => {
    const out = path.join(work, 'graph.json')
    const r = await runToma(['export', core, '--format', 'json', '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const g = JSON.parse(fs.readFileSync(out, 'utf8'))
    expect(g.format).toBe('toma-graph')
    expect(g.version).toBe(1)
    expect(g.allocator).toEqual({kind: 'gperftools', version: truth.gperftools, pageSize: 8192})
    g.objects.forEach((o: {id: number; address: string; state: string}, i: number) => {
      expect(o.id).toBe(i)
      expect(o.address).toMatch(/^0x[0-9a-f]+$/)
      expect(o.state).toBe('live')
    })
    const n = g.objects.length
    for (const e of g.edges) expect(e.from >= 0 && e.from < n && e.to >= 0 && e.to < n).toBe(true)
    for (const x of g.roots) expect(x.to >= 0 && x.to < n && (ROOT_KIND_NAMES as readonly string[]).includes(x.kind)).toBe(true)
    const byAddress = new Map(g.objects.map((o: {address: string}, i: number) => [o.address, i]))
    const live = new Set(truth.live.map(([a]) => a))
    for (const a of live) expect(byAddress.has(a), a).toBe(true)
    const extra = g.objects.filter((o: {address: string}) => !live.has(o.address)).reduce((s: number, o: {size: number}) => s + o.size, 0)
    expect(extra).toBe(truth.preHookAllocatedBytes)
    for (const o of truth.objects) {
      const obj = g.objects[byAddress.get(o.address) as number]
      expect(obj.type).toBe(o.class)
      for (const p of o.pointers) {
        const to = g.objects.find((x: {address: string; size: number}) => addr(x.address) <= addr(p.to) + p.toOffset && addr(p.to) + p.toOffset < addr(x.address) + x.size)
        expect(g.edges.some((e: {from: number; to: number; offset: number; toOffset: number}) => e.from === obj.id && e.to === to.id && e.offset === p.offset && e.toOffset === p.toOffset)).toBe(true)
      }
    }
  })

  it('export --all lists objects in every TCMalloc state', async () => {
    const out = path.join(work, 'all.json')
    expect((await runToma(['export', core, '--all', '-o', out], {cwd: work})).status).toBe(0)
    const g = JSON.parse(fs.readFileSync(out, 'utf8'))
    expect(new Set(g.objects.map((o: {state: string}) => o.state))).toEqual(new Set(['live', 'thread-cache', 'central-cache', 'transfer-cache', 'page-heap', 'returned']))
  })

  it('export dot: the neighbourhood of an object', async () => {
    const node = truth.objects.find(o => o.name === 'nodeA')!
    const r = await runToma(['export', core, '--format', 'dot', '--around', node.address, '--depth', '1'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^digraph heap \{/)
    expect(r.stdout).toContain(node.address)
    expect(r.stdout).toMatch(/app::Node/)
  })

  it('commands without a core use the latest analysis made here, and say so', async () => {
    const o = truth.objects[0]!
    const r = await runToma(['find-object', o.address], {cwd: work})
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/using the analysis of .*core/)
    expect(r.stdout).toContain(o.address)
  })

  it('a stale index is detected and rebuilt', async () => {
    const later = new Date(Date.now() + 60_000)
    fs.utimesSync(core, later, later)
    const r = await runToma(['classes', core], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/stale/)
    const again = await runToma(['classes', core], {cwd: work})
    expect(again.stderr).not.toMatch(/stale/)
  })
})
