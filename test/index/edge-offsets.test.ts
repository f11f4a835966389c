import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {analyzeCore, type Analysis} from '../../src/pipeline/analyze-core.js'
import {TomaError} from '../../src/errors.js'
import {HeapIndex, type EdgeRef} from '../../src/index/heap-index.js'
import {DamagedIndexError} from '../../src/index/index-file.js'
import {LIVE} from '../../src/heap/states.js'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {INDEX_DATA_START, indexLayout} from '../helpers/index-layout.js'
import {testTemp} from '../helpers/test-temp.js'

// Edges keep only their targets; queries find each pointer's offsets again in the core, from the
// object's start or from a checkpoint (src/graph/edge-words.ts). The fixture heaps are too small
// for the default rule's checkpoints (every 256th edge of an object, or 1 MiB on), so the same
// core is also analysed under a narrow rule: its answers, walked from checkpoints, must be the
// default index's, walked from each object's start.
const chosen = fixtureIndex().filter(f => ['v2.10-shared', 'v2.18.1-minimal'].includes(f.id))
const NARROW = {edges: 3, bytes: 64}
let work: string
/** Each chosen fixture's core, opened once (for another fixture's index: a core it was not made from). */
const programs = new Map<string, Program>()
beforeAll(async () => {
  work = testTemp('toma-edge-offsets-')
  for (const f of chosen) programs.set(f.id, Program.load(Core.open(await fixtureCorePath(f.id)), fixtureFlags(f)))
})
afterAll(() => {
  for (const p of programs.values()) p.core.close()
  fs.rmSync(work, {recursive: true, force: true})
})

describe.skipIf(chosen.length < 2).each(chosen.map(f => [f.id, f] as const))('edge offsets from the core, %s', (id, entry) => {
  let analysis: Analysis
  let plain: HeapIndex
  let narrow: HeapIndex
  let narrowPath: string
  let core: string
  beforeAll(async () => {
    core = await fixtureCorePath(id)
    const plainPath = path.join(work, `${id}.toma-index`)
    narrowPath = path.join(work, `${id}.narrow.toma-index`)
    const program = programs.get(id)!
    analysis = analyzeCore(core, fixtureFlags(entry), undefined, plainPath, program, {workers: 1})
    analyzeCore(core, fixtureFlags(entry), undefined, narrowPath, program, {workers: 1, checkpoints: NARROW})
    plain = HeapIndex.open(plainPath)!
    narrow = HeapIndex.open(narrowPath)!
    for (const index of [plain, narrow]) index.useCore(program.core.memory, core)
  })
  afterAll(() => {
    plain?.file.close()
    narrow?.file.close()
  })

  const liveWithEdges = () => {
    const ids: number[] = []
    for (let o = 0; o < analysis.heap.state.length; o++) if (analysis.heap.state[o] === LIVE && plain.outDegree(o) > 0) ids.push(o)
    return ids
  }

  it('the narrow index has checkpoints, the default one none on this small heap', () => {
    expect(plain.file.length('edge.checkpoint')).toBe(0)
    expect(narrow.file.length('edge.checkpoint')).toBeGreaterThan(100)
    expect(narrow.file.length('edge.checkpointOffset')).toBe(narrow.file.length('edge.checkpoint'))
  })

  it('gives every edge the same offsets walked from a checkpoint as from the object start: out, in, between', () => {
    const ids = liveWithEdges()
    expect(ids.length).toBeGreaterThan(100)
    const incoming = new Map<number, EdgeRef[]>()
    for (const o of ids) {
      const edges = plain.outEdges(o)
      expect(narrow.outEdges(o)).toEqual(edges)
      for (const e of edges) incoming.set(e.to, [...(incoming.get(e.to) ?? []), e])
      // One edge at a time: each walk starts at the checkpoint before it.
      for (let k = 0; k < edges.length; k++) {
        const one = narrow.objectEdges(o, k, 1)
        expect([one.to[0], one.offset[0], one.toOffset[0]]).toEqual([edges[k]!.to, edges[k]!.offset, edges[k]!.toOffset])
      }
      for (const e of edges) expect(narrow.edgeBetween(o, e.to)).toEqual(plain.edgeBetween(o, e.to))
      // Past the last edge: none, even where the next object's first edge is a checkpoint.
      expect(narrow.objectEdges(o, edges.length, 1).to.length).toBe(0)
    }
    for (const [to, edges] of incoming) {
      expect(narrow.inEdges(to)).toEqual(edges)
      expect(plain.inEdges(to)).toEqual(edges)
    }
  })

  it('says in one line that the index is not this core\'s when the core does not hold the pointers', () => {
    const other = chosen.find(f => f.id !== id)!
    const wrong = HeapIndex.open(path.join(work, `${id}.toma-index`))!
    try {
      // Another process's core: the first object whose words do not match stops the walk.
      wrong.useCore(programs.get(other.id)!.core.memory, `${other.id} core`)
      let error: unknown
      for (const o of liveWithEdges()) {
        try {
          wrong.outEdges(o)
        } catch (e) {
          error = e
          break
        }
      }
      expect(error).toBeInstanceOf(TomaError)
      expect((error as Error).message).toMatch(/^\S+ core: the object at 0x[0-9a-f]+ does not hold its edge \d+'s pointer in this core: the index was not made from it; run toma analyze on it again$/)
    } finally {
      wrong.file.close()
    }
  })

  it('calls a checkpoint whose offset is not a word of its object damage', () => {
    const bytes = fs.readFileSync(narrowPath)
    const {header} = indexLayout(bytes)
    const entry = header.arrays['edge.checkpointOffset']
    const damagedPath = path.join(work, `${id}.damaged.toma-index`)
    const damaged = Buffer.from(bytes)
    damaged.writeDoubleLE(3, INDEX_DATA_START + entry.offset)
    fs.writeFileSync(damagedPath, damaged)
    const index = HeapIndex.open(damagedPath)!
    try {
      index.useCore(analysis.program.core.memory, core)
      const first = index.file.array('edge.checkpoint')[0]!
      const outStart = index.file.array('edge.outStart')
      let from = 0
      while (outStart[from + 1]! <= first) from++
      expect(() => index.objectEdges(from, first - outStart[from]!, 1)).toThrow(DamagedIndexError)
      expect(() => index.objectEdges(from, first - outStart[from]!, 1)).toThrow(/checkpoint 0 has a bad offset/)
    } finally {
      index.file.close()
    }
  })
})

