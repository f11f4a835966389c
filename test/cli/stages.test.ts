import fs from 'node:fs'
import path from 'node:path'
import {spawn, type ChildProcess} from 'node:child_process'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {fileURLToPath} from 'node:url'
import {runToma} from '../helpers/run-toma.js'
import {indexLayout, INDEX_DATA_START} from '../helpers/index-layout.js'
import {testTemp} from '../helpers/test-temp.js'
import {INDEX_ARRAYS, stageOf, type ArrayName} from '../../src/index/schema.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {Program} from '../../src/program/program.js'
import {objectInfo} from '../../src/queries/object-info.js'

// The staged analysis as a user meets it: the model stage's index answers classes, find-object and
// check --max-live-bytes without the pointer scan; a query that needs the graph builds it (or
// waits for the toma building it), and the index it leaves is the one a single analysis writes.
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

describe.skipIf(!entry)('stages on v2.10-shared', () => {
  let work: string
  let core: string
  let truth: Truth
  const flags = () => {
    const f = fixtureFlags(entry!)
    return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
  }
  const json = async (args: string[]) => {
    const r = await runToma([...args, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    return {out: JSON.parse(r.stdout), stderr: r.stderr}
  }
  const header = (file: string) => indexLayout(fs.readFileSync(file)).header as {stages: string[]; meta: Record<string, unknown>; arrays: Record<string, unknown>}
  const identity = (file: string) => {
    const s = fs.statSync(file)
    return [s.ino, s.mtimeMs, s.size]
  }
  /** The index at `file` with its meta changed by `change` (its arrays kept), written to `out`. */
  const withMeta = (file: string, out: string, change: (meta: Record<string, unknown>) => void) => {
    const bytes = fs.readFileSync(file)
    const {header: h, headerAt} = indexLayout(bytes)
    change((h as {meta: Record<string, unknown>}).meta)
    const text = Buffer.from(JSON.stringify(h))
    const pre = Buffer.from(bytes.subarray(0, INDEX_DATA_START))
    pre.writeUInt32LE(text.length, 12)
    fs.writeFileSync(out, Buffer.concat([pre, bytes.subarray(INDEX_DATA_START, headerAt), text]))
  }

  let whole: string
  let wholeJson: {classes: {types: Array<{type: string; bytes: number; via: string}>; untyped: Array<{bytes: number}>}}

  beforeAll(async () => {
    work = testTemp('toma-stages-')
    core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(entry!.id), core)
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry!.id, 'truth.json'), 'utf8'))
    // The reference: one analysis through both stages, at another path.
    whole = path.join(work, 'whole.toma-index')
    const a = await json(['analyze', core, ...flags(), '--index', whole])
    expect(a.out.stages).toEqual(['model', 'graph'])
    const c = await json(['classes', whole])
    wholeJson = {classes: c.out}
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('analyze --stage model writes an index of the model stage alone, and says the graph is not built', async () => {
    const r = await runToma(['analyze', core, ...flags(), '--stage', 'model'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/Object graph\nnot built: this index holds the heap model/)
    const h = header(core + '.toma-index')
    expect(h.stages).toEqual(['model'])
    // Exactly the model stage's arrays; no process is building its graph.
    expect(Object.keys(h.arrays).sort()).toEqual((Object.keys(INDEX_ARRAYS) as ArrayName[]).filter(n => stageOf(n) === 'model').sort())
    expect(h.meta.graphUnderWay).toBeUndefined()
    const {out} = await json(['analyze', core, ...flags(), '--stage', 'model'])
    expect(out.stages).toEqual(['model'])
    expect(out.graph).toBeNull()
    // The heap model's figures are the whole analysis's.
    const w = header(whole).meta.summary as {states: unknown; crossCheck: unknown}
    expect(out.states).toEqual(w.states)
    expect(out.crossCheck).toEqual(w.crossCheck)
  })

  it('classes, find-object and check --max-live-bytes answer from it without building the graph', async () => {
    const before = identity(core + '.toma-index')
    const classes = await json(['classes', core])
    expect(classes.stderr).toBe('')
    expect(classes.out.graph).toBe(false)
    // Live bytes as the whole index counts them; names by vtable alone, each the whole index's by vtable.
    const live = (c: typeof wholeJson.classes) => [...c.types, ...c.untyped].reduce((n, t) => n + t.bytes, 0)
    expect(live(classes.out)).toBe(live(wholeJson.classes))
    expect(classes.out.types.length).toBeGreaterThan(0)
    for (const t of classes.out.types) {
      expect(t.via).toBe('vtable')
      expect(t.retainedBytes).toBeNull()
      expect(wholeJson.classes.types.find(w => w.type === t.type && w.via === 'vtable')?.bytes, t.type).toBe(t.bytes)
    }
    // Every manifest object with a vtable: its type and state, who holds it not known yet. The
    // command answers for the first (from the model stage's index, building nothing: stderr is
    // empty and the index the same file at the end); its own code answers for every one in-process.
    const typed = truth.objects.filter(x => x.class !== null)
    const viaCli = await json(['find-object', typed[0]!.address, core])
    expect(viaCli.stderr).toBe('')
    const index = HeapIndex.open(core + '.toma-index')!
    const program = Program.load(Core.open(core), fixtureFlags(entry!))
    try {
      expect(index.holds('graph')).toBe(false)
      index.useCore(program.core.memory, core)
      for (const o of typed) {
        const object = o === typed[0] ? viaCli.out.object : objectInfo(program, index, addr(o.address), false).object
        expect(object.address).toBe(o.address)
        expect(object.state).toBe('live')
        expect(object.type).toBe(o.class)
        expect(object.graph).toBe(false)
        expect(object.held).toBeNull()
      }
    } finally {
      index.close()
      program.core.close()
    }
    const limit = live(wholeJson.classes)
    const holds = await runToma(['check', core, '--max-live-bytes', String(limit)], {cwd: work})
    expect([holds.status, holds.stderr]).toEqual([0, ''])
    const broken = await runToma(['check', core, '--max-live-bytes', String(limit - 1)], {cwd: work})
    expect(broken.status).toBe(1)
    expect(broken.stdout).toContain(`live-bytes`)
    expect(identity(core + '.toma-index')).toEqual(before)
  })

  it('a query that needs the graph builds it, and leaves the index one analysis writes, byte for byte', async () => {
    const {out, stderr} = await json(['leaks', core])
    expect(stderr).toContain('holds the heap model only; building the object graph')
    expect(out.objects).toBeGreaterThan(0)
    expect(fs.readFileSync(core + '.toma-index').equals(fs.readFileSync(whole))).toBe(true)
    // From the whole index, classes has every tier's names and retained sizes.
    const classes = await json(['classes', core])
    expect(classes.out).toEqual(wholeJson.classes)
  })

  describe('a model index whose graph another toma is building', () => {
    let model: string
    let sleeper: ChildProcess | undefined
    beforeAll(async () => {
      model = path.join(work, 'model.toma-index')
      await json(['analyze', core, ...flags(), '--stage', 'model', '--index', model])
    })
    afterAll(() => sleeper?.kill('SIGKILL'))

    /** Start time of a pid (/proc/PID/stat's 22nd field), as toma records it. */
    const startTime = (pid: number) => {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
    }

    it('waits for it while it runs, and answers from the index it leaves', async () => {
      // A stand-in for the analysing toma: a process that runs until the whole index is in place.
      sleeper = spawn('sleep', ['60'], {stdio: 'ignore'})
      const pid = sleeper.pid!
      const waiting = path.join(work, 'waiting.toma-index')
      withMeta(model, waiting, m => (m.graphUnderWay = {pid, startTime: startTime(pid)}))
      // …and the temporary it writes the whole index to, named as toma names it.
      const temporary = path.join(work, `.waiting.toma-index.toma-tmp-${pid}-0123456789abcdef`)
      fs.writeFileSync(temporary, '')
      const query = spawn(process.execPath, [BIN, 'leaks', waiting, '--json'], {cwd: work, env: {...process.env, NO_COLOR: '1'}})
      let stdout = ''
      let stderr = ''
      query.stdout.setEncoding('utf8').on('data', d => (stdout += d))
      // Once the query says it waits, the "analysis" puts the whole index in place and ends.
      query.stderr.setEncoding('utf8').on('data', d => {
        stderr += d
        if (!stderr.includes('waiting for it') || fs.existsSync(waiting + '.done')) return
        fs.copyFileSync(whole, waiting + '.new')
        fs.renameSync(waiting + '.new', waiting)
        fs.rmSync(temporary)
        fs.writeFileSync(waiting + '.done', '')
        sleeper!.kill('SIGKILL')
      })
      const timer = setTimeout(() => query.kill('SIGKILL'), 60_000)
      const status = await new Promise(resolve => query.on('close', resolve))
      clearTimeout(timer)
      expect(status, stderr).toBe(0)
      expect(stderr).toContain(`process ${pid} is building the object graph of this core; waiting for it`)
      expect(stderr).not.toContain('holds the heap model only')
      expect(JSON.parse(stdout).objects).toBeGreaterThan(0)
      expect(fs.readFileSync(waiting).equals(fs.readFileSync(whole))).toBe(true)
    })

    it('does not wait for a running process that writes no temporary beside the index (an index made by hand)', async () => {
      const hand = path.join(work, 'by-hand.toma-index')
      // This test's own process: running, with its real start time, but writing no index there.
      withMeta(model, hand, m => (m.graphUnderWay = {pid: process.pid, startTime: startTime(process.pid)}))
      const r = await runToma(['leaks', hand, '--json'], {cwd: work})
      expect(r.status, r.stderr).toBe(0)
      expect(r.stderr).not.toContain('waiting')
      expect(r.stderr).toContain('holds the heap model only; building the object graph')
      expect(fs.readFileSync(hand).equals(fs.readFileSync(whole))).toBe(true)
    })

    it('does not wait for a process that has ended (or a pid now another process\'s): it builds the graph itself', async () => {
      const gone = path.join(work, 'gone.toma-index')
      // This test's own pid with another start time: a pid the kernel has given to another process.
      withMeta(model, gone, m => (m.graphUnderWay = {pid: process.pid, startTime: startTime(process.pid) + 1}))
      const r = await runToma(['leaks', gone, '--json'], {cwd: work})
      expect(r.status, r.stderr).toBe(0)
      expect(r.stderr).not.toContain('waiting')
      expect(r.stderr).toContain('holds the heap model only; building the object graph')
      expect(fs.readFileSync(gone).equals(fs.readFileSync(whole))).toBe(true)
    })
  })
})
