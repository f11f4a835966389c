import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {analyzeCore} from '../../src/pipeline/analyze-core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {DamagedIndexError} from '../../src/index/index-file.js'
import {decodeHolderTable, HOLDER_SCOPES} from '../../src/index/holder-table.js'
import {holderGroups, holderName, holderWalk, objectHolders, storedHolderName, storedHolders} from '../../src/queries/holder-groups.js'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {brotliCorePath, fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 52: analyze walks the dominator tree for the holders once and stores what it found; the
// queries read that. Here the stored result is held against a walk of the finished index (what
// every query ran before): the same groups in each scope, field for field and in the same order,
// and the same holder name for every slot.

const SLABCACHE = fileURLToPath(new URL('../../fixtures/slabcache', import.meta.url))
const TCMALLOC_2_10 = fileURLToPath(new URL('../../fixtures/cores/v2.10-minimal/libtcmalloc_minimal.so.4', import.meta.url))
const sampled = fixtureIndex().find(f => f.id === 'v2.10-sampled')

/** The cores: slabcache's C heap (global, mapping, frame and leaked holders) and a C++ one (types hold its untyped blocks). */
const CORES: Array<{id: string; core: () => Promise<string>; flags: {exe: string; tcmalloc?: string}}> = [
  {id: 'slabcache', core: () => brotliCorePath(path.join(SLABCACHE, 'core.br')), flags: {exe: path.join(SLABCACHE, 'slabcache'), tcmalloc: TCMALLOC_2_10}},
  ...(sampled ? [{id: sampled.id, core: () => fixtureCorePath(sampled.id), flags: fixtureFlags(sampled)}] : []),
]

let work: string
beforeAll(() => {
  work = testTemp('toma-holders-')
})
afterAll(() => {
  if (work) fs.rmSync(work, {recursive: true, force: true})
})

/** Holder kinds met on all the cores together (each core's test adds its own). */
const kindsMet = new Set<string>()

describe.each(CORES)('the holders analyze stored ($id) are the walk\'s', ({id, core, flags}) => {
  let program: Program
  let index: HeapIndex

  beforeAll(async () => {
    const corePath = await core()
    program = Program.load(Core.open(corePath), flags)
    const file = path.join(work, `${id}.toma-index`)
    analyzeCore(corePath, flags, undefined, file, program, {workers: 1})
    index = HeapIndex.open(file)!
    index.useCore(program.core.memory, corePath)
  }, 120_000)
  afterAll(() => {
    index?.close()
    program?.core.close()
  })

  it('each scope\'s groups: the same, field for field, in the same order', () => {
    for (const scope of HOLDER_SCOPES) {
      const walked = holderWalk(program, index, scope).groups
      const stored = holderGroups(index, scope)
      expect(JSON.stringify(stored), scope).toBe(JSON.stringify(walked))
      expect(stored, scope).toEqual(walked)
    }
    const all = holderGroups(index, 'all')
    expect(all.length).toBeGreaterThan(0)
    for (const g of all) kindsMet.add(g.holder.kind)
  })

  it('every slot: the same holder and offset, and the same holder name, whole or one slot at a time', () => {
    const walked = holderWalk(program, index, 'all')
    const stored = objectHolders(index)
    expect(stored.holderOf).toEqual(walked.holderOf)
    expect(stored.entryOffset).toEqual(walked.entryOffset)
    // Slot by slot (find-object's way) for every untyped one, and for the slots no walk reached.
    const types = index.columns.type()
    const wrong: string[] = []
    let named = 0
    for (let slot = 0; slot < walked.holderOf.length; slot++) {
      const name = holderName(walked, slot)
      if (name !== null && types[slot] === 0) named++
      if (holderName(stored, slot) !== name) wrong.push(`slot ${slot}: ${holderName(stored, slot)} for ${name}`)
      if ((types[slot] === 0 || name === null) && storedHolderName(index, slot) !== name) wrong.push(`slot ${slot} alone: ${storedHolderName(index, slot)} for ${name}`)
    }
    expect(wrong).toEqual([])
    expect(named).toBeGreaterThan(0)
  })

  it('under a memory limit, the walk through caches of a few small blocks: the same holders, offsets and table', () => {
    // Three blocks of 16 elements a column: nearly every step of the walk leaves the block it read last.
    const whole = storedHolders(program, index)
    const cached = storedHolders(program, index, {}, {cacheBytes: 3 * 16 * 8, blockWords: 16})
    expect(whole.holderOf.length).toBeGreaterThan(16 * 3 * 8)
    expect(cached.holderOf).toEqual(whole.holderOf)
    expect(cached.entryOffset).toEqual(whole.entryOffset)
    expect(Buffer.from(cached.table).equals(Buffer.from(whole.table))).toBe(true)
    // And what analyze stored (its own walk, on the columns it held).
    const stored = objectHolders(index)
    expect(cached.holderOf).toEqual(stored.holderOf)
    expect(cached.entryOffset).toEqual(stored.entryOffset)
  })
})

describe('the stored holders, all cores', () => {
  it('met holders of the kinds that matter: a type, a global, a mapping, a frame, leaked', () => {
    for (const kind of ['global', 'mapping', 'frame', 'leaked', ...(sampled ? ['type'] : [])]) expect(kindsMet, kind).toContain(kind)
  })

  it('a damaged holder table is one clear line: the index is damaged', () => {
    const bad = (text: string) => () => decodeHolderTable(Buffer.from(text), 'x.toma-index', 10)
    expect(bad('{')).toThrow(DamagedIndexError)
    expect(bad('{"holders":[],"groups":{}}')).toThrow(/bad holder groups \(all\)/)
    const group = {size: 8, holder: 0, objects: 1, bytes: 8, retainedBytes: 8, retainedObjects: 1, offsets: [], entries: null, example: 10, leaked: false}
    expect(bad(JSON.stringify({holders: [{kind: 'global', name: 'g'}], groups: {all: [group], reachable: [], leaked: []}}))).toThrow(/x\.toma-index: damaged toma index \(bad holder groups \(all\)\)/)
    expect(bad(JSON.stringify({holders: [{kind: 'nonsense', name: 'g'}], groups: {all: [], reachable: [], leaked: []}}))).toThrow(/bad holder table/)
  })
})
