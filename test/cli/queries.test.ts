import fs from 'node:fs'
import path from 'node:path'
import {spawnSync} from 'node:child_process'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT_KIND_NAMES} from '../../src/graph/csr.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {objectInfo} from '../../src/queries/object-info.js'
import {refsOf} from '../../src/queries/refs.js'
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
  /** What `analyze --json` said when beforeAll made the index. */
  let analysis: {threadCaches: Array<{tid: number; inTls: boolean; address: string}>}

  beforeAll(async () => {
    work = testTemp(`toma-q-${id}-`)
    core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(id), core)
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, id, 'truth.json'), 'utf8'))
    const a = (analysis = await json(['analyze', core, ...flags()]))
    expect(a.crossCheck.every((c: {equal: boolean}) => c.equal)).toBe(true)
    expect(fs.existsSync(core + '.toma-index')).toBe(true)
    index = new HeapIndex(IndexFile.open(core + '.toma-index')!)
    program = Program.load(Core.open(core), fixtureFlags(entry))
    index.useCore(program.core.memory, core)
  })
  afterAll(() => {
    program?.core.close()
    index?.file.close()
    if (work) fs.rmSync(work, {recursive: true, force: true})
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
    // The contract's root kinds (export-schema.md): a writable mapping is `anonymous`; every root has a label, a stack root in a recovered frame its frame number.
    const kinds = ['register', 'stack', 'global', 'tls', 'anonymous', 'cached-stack']
    for (const x of g.roots) {
      expect(x.to >= 0 && x.to < n && kinds.includes(x.kind), x.kind).toBe(true)
      expect(typeof x.label).toBe('string')
    }
    expect(g.roots.some((x: {kind: string}) => x.kind === 'anonymous')).toBe(true)
    expect(g.roots.filter((x: {kind: string}) => x.kind === 'stack').some((x: {frame?: number}) => typeof x.frame === 'number')).toBe(true)
    expect(ROOT_KIND_NAMES.length).toBe(kinds.length)
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

  // The live object with the most pointers into itself that other objects also point to, from the index.
  const selfReferencing = () => {
    let best = -1
    let bestSelf = 0
    for (let i = 0; i < index.objectCount; i++) {
      if (index.state(i) !== 'live') continue
      const self = index.outEdges(i).filter(e => e.to === i).length
      if (self > bestSelf && index.inDegree(i) - self >= 2) [best, bestSelf] = [i, self]
    }
    expect(best, 'a fixture object with self-references and two referrers').toBeGreaterThanOrEqual(0)
    return {slot: best, address: `0x${index.object(best).start.toString(16)}`, self: bestSelf}
  }
  const byName = (name: string) => truth.objects.find(o => o.name === name)!

  it('refs: self-references counted apart, real referrers first, every cut list says first N of M', async () => {
    const slab = selfReferencing()
    const others = index.inDegree(slab.slot) - slab.self
    const outOthers = index.outEdges(slab.slot).length - slab.self
    const r = await json(['refs', slab.address, core])
    expect(r.selfReferences.count).toBe(slab.self)
    expect(r.incomingCount).toBe(others)
    expect(r.incoming).toHaveLength(Math.min(others, 100))
    expect(r.incoming.every((e: {from: {address: string}}) => e.from.address !== slab.address)).toBe(true)
    expect(r.outgoingCount).toBe(outOthers)
    expect(r.outgoing.every((e: {to: {address: string}}) => e.to.address !== slab.address)).toBe(true)
    // Counts are whole whichever direction is listed.
    const onlyOut = refsOf(program, index, addr(slab.address), {incoming: false, outgoing: true, depth: 1, limit: 100})!
    const onlyIn = refsOf(program, index, addr(slab.address), {incoming: true, outgoing: false, depth: 1, limit: 100})!
    expect([onlyOut.incomingCount, onlyOut.incoming.length, onlyIn.outgoingCount, onlyIn.outgoing.length]).toEqual([others, 0, outOthers, 0])
    const cut = await json(['refs', slab.address, core, '--limit', '1'])
    expect(cut.incoming).toHaveLength(1)
    expect(cut.incomingCount).toBe(others)
    expect(cut.selfReferences.first).toHaveLength(1)
    expect(cut.selfReferences.count).toBe(slab.self)
    const text = await runToma(['refs', slab.address, core, '--limit', '1'], {cwd: work})
    expect(text.stdout).toContain(`${slab.self} words of it point into itself`)
    expect(text.stdout).toContain(`Pointed to by ${others} pointers from other objects (first 1 of ${others} shown)`)
    if (outOthers > 1) expect(text.stdout).toContain(`(first 1 of ${outOthers} shown)`)
    // The process's own record: every pointer globalCustomer holds points into itself (std::string's local buffers).
    const own = byName('globalCustomer')
    const g = await json(['refs', own.address, core])
    expect(g.selfReferences.first).toEqual(own.pointers.map(p => ({offset: p.offset, toOffset: p.toOffset})))
    expect(g.outgoingCount).toBe(0)
    const node = byName('inventory.names.node2')
    const selfOfNode = node.pointers.filter(p => p.to === node.address)
    expect(selfOfNode).toHaveLength(1)
    const one = await runToma(['refs', node.address, core], {cwd: work})
    expect(one.stdout).toContain(`1 word of it points into itself (self-references, not counted as referrers): +0x${selfOfNode[0]!.offset.toString(16)} → +0x${selfOfNode[0]!.toOffset.toString(16)}`)
  })

  it('find-object: the bytes around the address asked, each pointing word named, --bytes bounded', async () => {
    const inv = byName('inventory')
    const p = inv.pointers.find(x => x.offset >= 48)!
    const r = await json(['find-object', `0x${(addr(inv.address) + p.offset).toString(16)}`, core, '--bytes', '32'])
    const b = r.object.bytes
    expect(b.length).toBe(32)
    expect(b.offset <= p.offset && p.offset < b.offset + b.length).toBe(true)
    expect(b.hex).toBe(program.core.memory.readBytes(addr(inv.address) + b.offset, 32)!.toString('hex'))
    const inWindow = inv.pointers.filter(x => x.offset >= b.offset && x.offset < b.offset + b.length)
    expect(inWindow.length).toBeGreaterThan(0)
    for (const x of inWindow) {
      const w = b.words.find((w: {offset: number}) => w.offset === x.offset)
      expect(w, `word +${x.offset}`).toBeDefined()
      expect(w.value).toBe(`0x${(addr(x.to) + x.toOffset).toString(16)}`)
      expect(w.to).toMatchObject({kind: 'object', address: x.to, offset: x.toOffset, state: 'live'})
    }
    // The first word of a typed object is its vtable pointer: a module's address, named.
    const head = await json(['find-object', inv.address, core])
    const vptr = head.object.bytes.words.find((w: {offset: number}) => w.offset === 0)
    expect(vptr.to.kind).toBe('module')
    if (entry.config !== 'stripped') expect(vptr.to.label).toMatch(/Inventory/)
    const big = await runToma(['find-object', inv.address, core, '--bytes', '5000'], {cwd: work})
    expect(big.status).not.toBe(0)
    expect(big.stderr).toMatch(/--bytes.*less than or equal to 4096 but received: 5000/)
  })

  it('one object, one id: find-object, refs, leaks, DOT and both JSON exports agree', async () => {
    const live = path.join(work, 'ids.json')
    const all = path.join(work, 'ids-all.json')
    expect((await runToma(['export', core, '-o', live], {cwd: work})).status).toBe(0)
    expect((await runToma(['export', core, '--all', '-o', all], {cwd: work})).status).toBe(0)
    const g = JSON.parse(fs.readFileSync(live, 'utf8'))
    const ga = JSON.parse(fs.readFileSync(all, 'utf8'))
    ga.objects.forEach((o: {id: number}, i: number) => expect(o.id).toBe(i))
    expect(ga.objects.slice(0, g.objects.length)).toEqual(g.objects)
    const idOf = new Map<string, number>(g.objects.map((o: {address: string; id: number}) => [o.address, o.id]))
    for (const o of truth.objects) {
      const info = objectInfo(program, index, addr(o.address), false)
      if (!info.heap) throw new Error(`${o.name} not in the heap`)
      expect(info.object.id, o.name).toBe(idOf.get(o.address))
      const r = refsOf(program, index, addr(o.address), {incoming: true, outgoing: true, depth: 1, limit: 1000})!
      for (const e of r.incoming) expect(e.from.id).toBe(idOf.get(e.from.address))
      for (const e of r.outgoing) expect(e.to.id).toBe(idOf.get(e.to.address))
    }
    const inv = byName('inventory')
    expect((await json(['find-object', inv.address, core])).object.id).toBe(idOf.get(inv.address))
    const leaks = await json(['leaks', core])
    for (const o of leaks.largest) expect(o.id).toBe(idOf.get(o.address))
    const dot = await runToma(['export', core, '--format', 'dot', '--around', inv.address, '--depth', '1'], {cwd: work})
    expect(dot.stdout).toMatch(new RegExp(`\\bo${idOf.get(inv.address)} \\[label="#${idOf.get(inv.address)} ${inv.address}\\\\n`))
  })

  it('export dot: parallel pointers merged with count and offsets, self-pointers on the node, caps say what was left out', async () => {
    const arrows = (dot: string) => [...dot.matchAll(/^ {2}(o\d+) -> (o\d+) \[label="[^"]*", count=(\d+), offsets="([^"]*)"\];$/gm)]
    const nodeLine = (dot: string, name: string) => dot.split('\n').find(l => l.startsWith(`  ${name} [`))!
    const exportIds = async () => {
      const out = path.join(work, 'dot-ids.json')
      expect((await runToma(['export', core, '-o', out], {cwd: work})).status).toBe(0)
      return new Map<string, number>(JSON.parse(fs.readFileSync(out, 'utf8')).objects.map((o: {address: string; id: number}) => [o.address, o.id]))
    }
    const ids = await exportIds()
    const inv = byName('inventory')
    const buf = byName('inventory.items.buf')
    const r = await runToma(['export', core, '--format', 'dot', '--around', inv.address, '--depth', '1'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const drawn = arrows(r.stdout)
    const pairs = drawn.map(m => `${m[1]}>${m[2]}`)
    expect(new Set(pairs).size).toBe(pairs.length) // one arrow per pair
    expect(drawn.every(m => m[1] !== m[2])).toBe(true) // no self-loop arrows
    // inventory → its vector's buffer: the index's pointers (begin, end, capacity end) as one arrow.
    const parallel = index.outEdges(index.objectAt(addr(inv.address))!.index).filter(e => index.object(e.to).start === addr(buf.address))
    expect(parallel.length).toBeGreaterThan(1)
    const merged = drawn.filter(m => m[1] === `o${ids.get(inv.address)}` && m[2] === `o${ids.get(buf.address)}`)
    expect(merged).toHaveLength(1)
    expect(Number(merged[0]![3])).toBe(parallel.length)
    expect(merged[0]![4]!.split(' ')).toEqual(parallel.map(e => `+${e.offset}${e.toOffset ? `→+${e.toOffset}` : ''}`))
    const truthOffset = inv.pointers.find(p => p.to === buf.address)!
    expect(merged[0]![4]!.split(' ')).toContain(`+${truthOffset.offset}`)
    // The process's record: inventory.names.node2 points into itself once; it is drawn on its node.
    const node = byName('inventory.names.node2')
    const own = node.pointers.filter(p => p.to === node.address)
    const line = nodeLine(r.stdout, `o${ids.get(node.address)}`)
    expect(line).toContain(`self_pointers=${own.length}`)
    expect(line).toContain(`+${own[0]!.offset}→+${own[0]!.toOffset}`)
    // A slab pointing into itself: its self-pointers counted on its node, every pair once.
    const slab = selfReferencing()
    const s = await runToma(['export', core, '--format', 'dot', '--around', slab.address, '--depth', '2'], {cwd: work})
    expect(nodeLine(s.stdout, `o${ids.get(slab.address)}`)).toContain(`self_pointers=${slab.self},`)
    const sp = arrows(s.stdout).map(m => `${m[1]}>${m[2]}`)
    expect(new Set(sp).size).toBe(sp.length)
    // Caps: what was left out is said.
    const capped = await runToma(['export', core, '--format', 'dot', '--around', inv.address, '--depth', '1', '--max-nodes', '2', '--max-edges', '0'], {cwd: work})
    expect(capped.stdout.match(/^ {2}o\d+ \[/gm)).toHaveLength(2)
    expect(arrows(capped.stdout)).toHaveLength(0)
    expect(capped.stdout).toMatch(/left out: objects beyond --max-nodes 2; 1 of 1 arrows \(--max-edges 0\)/)
    expect(capped.stdout).toContain(core)
  })

  it('export dot: Graphviz renders it (dot -Tsvg)', async ctx => {
    if (spawnSync('dot', ['-V']).error) {
      console.warn('skipped: Graphviz `dot` is not installed (apt-get install graphviz)')
      ctx.skip()
    }
    for (const around of [byName('inventory').address, selfReferencing().address]) {
      const r = await runToma(['export', core, '--format', 'dot', '--around', around, '--depth', '2'], {cwd: work})
      const svg = spawnSync('dot', ['-Tsvg'], {input: r.stdout, encoding: 'utf8'})
      expect(svg.status, svg.stderr).toBe(0)
      expect(svg.stderr).toBe('')
      expect(svg.stdout).toMatch(/<svg[\s\S]*<\/svg>/)
    }
  })

  it('every answer says which core it is about', async () => {
    const o = byName('inventory')
    const tid = String(program.core.threads[0]!.tid)
    const queries = [['find-object', o.address], ['refs', o.address], ['classes'], ['leaks'], ['top'], ['top', '--by', 'type'], ['suspects'], ['path', o.address], ['threads'], ['dominators', o.address], ['stack', tid]]
    for (const args of queries) {
      expect((await json([...args, core])).core).toBe(core)
      const text = await runToma([...args, core], {cwd: work})
      expect(text.stdout.split('\n')[0]).toBe(`core ${core}`)
    }
  })

  it('classes: no line ends in spaces, numbers have thousands separators; leaks and analyze say counts in the right number', async () => {
    const counts = await json(['classes', core])
    const text = (await runToma(['classes', core], {cwd: work})).stdout
    expect(text.split('\n').filter(l => / $/.test(l))).toEqual([])
    const wide = counts.untyped.find((u: {size: number | null}) => u.size !== null && u.size >= 1000)
    expect(wide).toBeDefined()
    expect(text).toContain(wide.size.toLocaleString('en-US'))
    expect(text).not.toMatch(new RegExp(`\\b${wide.size}\\b`))
    const leaks = await json(['leaks', core])
    const leakText = (await runToma(['leaks', core], {cwd: work})).stdout
    expect(leakText).toContain(`${leaks.objects} live object${leaks.objects === 1 ? '' : 's'} (`)
    expect(leakText).not.toMatch(/\b1 live objects\b/)
  })

  it('analyze: a thread with two caches says which it uses and why the other exists', async () => {
    // The JSON answer is beforeAll's analysis (the same command on the same core); the text is another run's.
    const a = analysis
    const text = (await runToma(['analyze', core, ...flags(), '--index', path.join(work, 'again.idx')], {cwd: work})).stdout
    const main = truth.threads.find(t => t.role === 'main')!.tid
    const mine = a.threadCaches.filter((c: {tid: number}) => c.tid === main)
    const unused = mine.filter((c: {inTls: boolean}) => c.inTls === false)
    expect(mine.filter((c: {inTls: boolean}) => c.inTls === true)).toHaveLength(1)
    const used = mine.find((c: {inTls: boolean}) => c.inTls === true)!
    for (const c of unused) expect(text).toContain(`${c.address} (thread ${main}) is not the cache the thread uses: its TLS points at ${used.address}`)
    if (mine.length === 1) expect(text).not.toMatch(/is not the cache the thread uses/)
    // gperftools before 2.16 gives the main thread a startup cache besides the one it uses.
    expect(unused.length).toBe(['2.16', '2.18.1'].includes(truth.gperftools) ? 0 : 1)
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
