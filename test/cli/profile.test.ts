import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {PbfReader} from 'pbf'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {objectInfo} from '../../src/queries/object-info.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {SampleIndex} from '../../src/index/sample-index.js'
import {Program} from '../../src/program/program.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type FixtureEntry, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Sampled allocations against the process's own MallocExtension::GetHeapSample text (truth.heapSample),
// taken just before the freeze of the v2.10-sampled fixture (TCMALLOC_SAMPLE_PARAMETER=512).
const sampled = fixtureIndex().find(f => f.id === 'v2.10-sampled')!
const minimal = fixtureIndex().find(f => f.id === 'v2.10-minimal')!

const flagsOf = (entry: FixtureEntry) => {
  const f = fixtureFlags(entry)
  return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
}

/** The process's text: header, sample lines, memory-map lines. */
function sections(text: string) {
  const lines = text.split('\n')
  const map = lines.indexOf('MAPPED_LIBRARIES:')
  expect(map).toBeGreaterThan(0)
  expect(lines[map - 1]).toBe('')
  return {header: lines[0]!, samples: lines.slice(1, map - 1), maps: lines.slice(map + 1).filter(l => l !== '')}
}

/** One sample line: "     1:     1830 [     1:     1830] @ 0x7f… 0x55…" */
function sampleOf(line: string): {count: number; bytes: number; stack: number[]} {
  const m = /^ *(\d+): *(\d+) \[ *(\d+): *(\d+)\] @((?: 0x[0-9a-f]+)+)$/.exec(line)
  if (!m) throw new Error(`not a heap sample line: ${line}`)
  expect([m[3], m[4]]).toEqual([m[1], m[2]])
  return {count: Number(m[1]), bytes: Number(m[2]), stack: m[5]!.trim().split(' ').map(addr)}
}

/** pprof's scaleHeapSample (google/pprof profile/legacy_profile.go), as written there. */
function pprofScale(count: number, size: number, rate: number): [number, number] {
  if (count === 0 || size === 0) return [0, 0]
  if (rate <= 1) return [count, size]
  const avgSize = size / count
  const scale = 1 / (1 - Math.exp(-avgSize / rate))
  return [Math.trunc(count * scale), Math.trunc(size * scale)]
}

/** Decodes the parts of a profile.proto the test checks (field numbers from profile.proto). */
function decodeProfile(gz: Buffer) {
  const p = {
    strings: [] as string[],
    sampleType: [] as Array<[number, number]>,
    samples: [] as Array<{locations: number[]; values: number[]; labels: Array<{key: number; num: number}>}>,
    mappings: new Map<number, {start: number; limit: number; offset: number; file: number; buildId: number}>(),
    locations: new Map<number, {mapping: number; address: number; functions: number[]}>(),
    functions: new Map<number, {name: number; file: number}>(),
    periodType: [0, 0] as [number, number],
    period: 0,
  }
  const valueType = (r: PbfReader): [number, number] =>
    r.readFields((tag, v: [number, number], rr) => (tag === 1 ? (v[0] = rr.readVarint()) : tag === 2 ? (v[1] = rr.readVarint()) : undefined), [0, 0], r.readVarint() + r.pos)
  const reader = new PbfReader(zlib.gunzipSync(gz))
  reader.readFields((tag, _: null, r) => {
    if (tag === 1) p.sampleType.push(valueType(r))
    else if (tag === 2) {
      const s = {locations: [] as number[], values: [] as number[], labels: [] as Array<{key: number; num: number}>}
      r.readFields((t, x: typeof s, rr) => {
        if (t === 1) rr.readPackedVarint(x.locations)
        else if (t === 2) rr.readPackedVarint(x.values)
        else if (t === 3) x.labels.push(rr.readFields((u, l: {key: number; num: number}, r3) => (u === 1 ? (l.key = r3.readVarint()) : u === 3 ? (l.num = r3.readVarint()) : undefined), {key: 0, num: 0}, rr.readVarint() + rr.pos))
      }, s, r.readVarint() + r.pos)
      p.samples.push(s)
    } else if (tag === 3) {
      const m = r.readFields((t, x: Record<string, number>, rr) => {
        const v = rr.readVarint()
        const name = ({1: 'id', 2: 'start', 3: 'limit', 4: 'offset', 5: 'file', 6: 'buildId'} as Record<number, string>)[t]
        if (name) x[name] = v
      }, {id: 0, start: 0, limit: 0, offset: 0, file: 0, buildId: 0}, r.readVarint() + r.pos)
      p.mappings.set(m.id!, {start: m.start!, limit: m.limit!, offset: m.offset!, file: m.file!, buildId: m.buildId!})
    } else if (tag === 4) {
      const l = r.readFields((t, x: {id: number; mapping: number; address: number; functions: number[]}, rr) => {
        if (t === 1) x.id = rr.readVarint()
        else if (t === 2) x.mapping = rr.readVarint()
        else if (t === 3) x.address = rr.readVarint()
        else if (t === 4) rr.readFields((u, y: number[], r3) => (u === 1 ? y.push(r3.readVarint()) : undefined), x.functions, rr.readVarint() + rr.pos)
      }, {id: 0, mapping: 0, address: 0, functions: [] as number[]}, r.readVarint() + r.pos)
      p.locations.set(l.id, l)
    } else if (tag === 5) {
      const f = r.readFields((t, x: {id: number; name: number; file: number}, rr) => {
        const v = rr.readVarint()
        if (t === 1) x.id = v
        else if (t === 2) x.name = v
        else if (t === 4) x.file = v
      }, {id: 0, name: 0, file: 0}, r.readVarint() + r.pos)
      p.functions.set(f.id, f)
    } else if (tag === 6) p.strings.push(r.readString())
    else if (tag === 11) p.periodType = valueType(r)
    else if (tag === 12) p.period = r.readVarint()
  }, null)
  return p
}

describe('sampled allocations on v2.10-sampled', () => {
  let work: string
  let core: string
  let truth: Truth
  let process: ReturnType<typeof sections>
  let index: HeapIndex
  let program: Program

  beforeAll(async () => {
    work = testTemp('toma-profile-')
    core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(sampled.id), core)
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, sampled.id, 'truth.json'), 'utf8'))
    process = sections(truth.heapSample!)
    const a = await runToma(['analyze', core, ...flagsOf(sampled), '--json'], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
    const summary = JSON.parse(a.stdout)
    expect(summary.warnings.total).toBe(0)
    // The header's totals: "heap profile: <objects>: <bytes> [...] @ heap_v2/<period>".
    const [, objects, bytes, , , period] = /^heap profile: *(\d+): *(\d+) \[ *(\d+): *(\d+)\] @ heap_v2\/(\d+)$/.exec(process.header)!.map(Number)
    expect(summary.sampled).toEqual({objects, requestedBytes: bytes, period})
    index = new HeapIndex(IndexFile.open(core + '.toma-index')!)
    program = Program.load(Core.open(core), fixtureFlags(sampled))
    index.useCore(program.core.memory, core)
  })
  afterAll(() => {
    program?.core.close()
    index?.file.close()
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('the process sampled a few hundred objects', () => {
    expect(process.samples.length).toBeGreaterThanOrEqual(100)
    expect(new SampleIndex(index).count).toBe(process.samples.length)
  })

  it('--format legacy has exactly the samples GetHeapSample wrote (header, counts, bytes, stacks, order)', async () => {
    const out = path.join(work, 'heap.txt')
    const r = await runToma(['profile', core, '--format', 'legacy', '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const toma = sections(fs.readFileSync(out, 'utf8'))
    expect(toma.header).toBe(process.header)
    // Line for line, in its order too (oldest first: the reverse of sampled_objects_).
    expect(toma.samples).toEqual(process.samples)
    // The memory map: the same file mappings (range, protection, offset, path); a core keeps no
    // device or inode (toma writes 0), nor the [heap], [vvar] and [vsyscall] names or mappings.
    const withoutInode = (l: string) => l.replace(/^(\S+ \S+ \S+ \S+) \d+ +/, '$1 0 ').trimEnd()
    const files = (ls: string[]) => ls.map(withoutInode).filter(l => / \//.test(l)).sort()
    expect(files(toma.maps)).toEqual(files(process.maps))
    const ranges = new Set(process.maps.map(l => l.split(' ').slice(0, 2).join(' ')))
    for (const l of toma.maps) expect(ranges, l).toContain(l.split(' ').slice(0, 2).join(' '))
    const named = (ls: string[], name: string) => ls.filter(l => l.endsWith(name)).map(l => l.split(' ')[0])
    for (const name of ['[stack]', '[vdso]']) expect(named(toma.maps, name)).toEqual(named(process.maps, name))
    // --sample-period stands in for (here: overrides) the period read from the library.
    const other = await runToma(['profile', core, '--format', 'legacy', '--sample-period', '4096'], {cwd: work})
    expect(other.status, other.stderr).toBe(0)
    expect(other.stdout.split('\n')[0]).toBe(process.header.replace(/heap_v2\/\d+$/, 'heap_v2/4096'))
  })

  it('the pprof profile decodes to the same samples and pprof\'s unsampled totals', async () => {
    const out = path.join(work, 'heap.pb.gz')
    const r = await runToma(['profile', core, '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const p = decodeProfile(fs.readFileSync(out))
    const str = (i: number) => p.strings[i]
    expect(p.sampleType.map(([t, u]) => `${str(t)}/${str(u)}`)).toEqual(['inuse_objects/count', 'inuse_space/bytes'])
    expect(`${str(p.periodType[0])}/${str(p.periodType[1])}`).toBe('space/bytes')
    const rate = Number(/heap_v2\/(\d+)$/.exec(process.header)![1])
    expect(p.period).toBe(rate)
    // Totals as pprof computes them from the process's own text, line by line.
    const expected = [0, 0]
    for (const line of process.samples) {
      const s = sampleOf(line)
      const [c, b] = pprofScale(s.count, s.bytes, rate)
      expected[0] += c
      expected[1] += b
    }
    const got = [0, 0]
    for (const s of p.samples) {
      got[0] += s.values[0]!
      got[1] += s.values[1]!
    }
    expect(got).toEqual(expected)
    expect(expected[1]).toBeGreaterThan(Number(/^heap profile: *\d+: *(\d+)/.exec(process.header)![1]))
    // The stacks: each location's address is the return address (less one above the innermost frame, pprof's rule).
    const stacks = p.samples.map(s => {
      const label = s.labels.find(l => str(l.key) === 'bytes')!
      return `${label.num} @ ${s.locations.map((id, depth) => '0x' + (p.locations.get(id)!.address + (depth ? 1 : 0)).toString(16)).join(' ')}`
    })
    expect(stacks).toEqual(process.samples.map(l => {
      const s = sampleOf(l)
      return `${s.bytes} @ ${s.stack.map(a => '0x' + a.toString(16)).join(' ')}`
    }))
    // Every location lies in a mapping of its module file, with the core's build-id; the worker's frame is named.
    const modules = new Map(program.core.modules.map(m => [m.path, m.buildId]))
    for (const loc of p.locations.values()) {
      const m = p.mappings.get(loc.mapping)!
      expect(loc.address >= m.start && loc.address < m.limit).toBe(true)
      expect(modules.has(str(m.file)!)).toBe(true)
      expect(str(m.buildId)).toBe(modules.get(str(m.file)!) ?? '')
    }
    const names = [...p.functions.values()].map(f => str(f.name))
    const workers = truth.threads.filter(t => t.startRoutine).map(t => t.startRoutine!)
    expect(names.some(n => workers.includes(n!))).toBe(true)
  })

  it('find-object: a sampled object shows its requested size and its allocation stack, symbolized', async () => {
    const requested = new Map(truth.live.map(([a, size]) => [addr(a), size]))
    const fromCore: string[] = []
    for (const s of new SampleIndex(index)) {
      const info = objectInfo(program, index, s.address + 1, false)
      if (!info.heap) throw new Error(`sample at ${s.address} not in the heap`)
      const a = info.object.allocation!
      // The hooks saw the same request at the same address.
      expect(a.requestedSize).toBe(requested.get(s.address))
      fromCore.push(`${a.requestedSize} @ ${a.stack.map(f => f.address).join(' ')}`)
    }
    expect(fromCore.sort()).toEqual(process.samples.map(l => {
      const s = sampleOf(l)
      return `${s.bytes} @ ${s.stack.map(a => '0x' + a.toString(16)).join(' ')}`
    }).sort())
    const first = new SampleIndex(index).sample(0)
    const r = await runToma(['find-object', '0x' + first.address.toString(16), core, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const cli = JSON.parse(r.stdout).object.allocation
    expect(cli.stack.map((f: {address: string}) => addr(f.address))).toEqual(first.stack)
    // The program's own frame is the worker that allocated (the sampling threads, see the fixture README).
    const worker = truth.threads.filter(t => t.startRoutine).map(t => t.startRoutine!)
    expect(cli.stack.some((f: {symbol: string | null}) => worker.some(w => f.symbol?.startsWith(`${w}+0x`)))).toBe(true)
    const text = await runToma(['find-object', '0x' + first.address.toString(16), core], {cwd: work})
    expect(text.stdout).toContain(`sampled by TCMalloc: ${first.requestedSize.toLocaleString('en-US')} B requested, allocated at:`)
  })

  it('find-object: an object TCMalloc did not sample has no allocation record', async () => {
    const samples = new Set([...new SampleIndex(index)].map(s => s.address))
    const plain = truth.objects.filter(o => !samples.has(addr(o.address)))
    expect(plain.length).toBeGreaterThan(0)
    for (const o of plain) {
      const info = objectInfo(program, index, addr(o.address), false)
      if (!info.heap) throw new Error(`${o.name} not in the heap`)
      expect(info.object.allocation, o.name).toBeNull()
    }
    const r = await runToma(['find-object', plain[0]!.address, core], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).not.toContain('sampled by TCMalloc')
  })

  it('export: exactly the sampled objects carry their allocation', async () => {
    const out = path.join(work, 'graph.json')
    const r = await runToma(['export', core, '-o', out], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const graph = JSON.parse(fs.readFileSync(out, 'utf8'))
    const withAllocation = graph.objects.filter((o: {allocation?: unknown}) => o.allocation)
    expect(withAllocation.length).toBe(process.samples.length)
    const samples = new Map([...new SampleIndex(index)].map(s => [s.address, s]))
    // The contract's shape (export-schema.md): {requested, stack: [hex], frames: [names]}.
    const requested = new Map(truth.live.map(([a, size]) => [addr(a), size]))
    for (const o of withAllocation) {
      const s = samples.get(addr(o.address))!
      expect(Object.keys(o.allocation).sort()).toEqual(['frames', 'requested', 'stack'])
      expect(o.allocation.requested).toBe(requested.get(addr(o.address)))
      expect(o.allocation.stack.map(addr)).toEqual(s.stack)
      expect(o.allocation.frames).toHaveLength(s.stack.length)
      expect(o.allocation.frames.some((f: string) => /^heapdemo_worker\d\+0x[0-9a-f]+ \(heapdemo\)$/.test(f))).toBe(true)
    }
  })
})

describe('no samples on v2.10-minimal', () => {
  let work: string
  beforeAll(() => {
    work = testTemp('toma-profile-min-')
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('profile says there are none, on one line, and exits non-zero', async () => {
    const core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(minimal.id), core)
    const a = await runToma(['analyze', core, ...flagsOf(minimal)], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
    for (const format of ['pprof', 'legacy']) {
      const out = path.join(work, `heap.${format}`)
      const r = await runToma(['profile', core, '--format', format, '-o', out], {cwd: work})
      expect(r.status).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/^toma: no sampled objects in this core/)
      expect(fs.existsSync(out)).toBe(false)
    }
  })
})
