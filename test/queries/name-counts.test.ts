import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {analyzeCore} from '../../src/pipeline/analyze-core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {countNames, TIERS} from '../../src/queries/name-counts.js'
import {classCounts} from '../../src/queries/classes.js'
import {LIVE} from '../../src/heap/states.js'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 52: classes and top --by type counted every live object per query; analyze counts them
// once (name-counts.ts) into both stages' indexes. Here the stored counts are held against a count
// of the index's own columns, and classes against the index's objects one by one.

const entry = fixtureIndex().find(f => f.id === 'v2.10-sampled')

describe.skipIf(!entry)('live objects per name, size class and tier, as analyze counted them (v2.10-sampled)', () => {
  let work: string
  let program: Program
  const indexes: Record<string, HeapIndex> = {}

  beforeAll(async () => {
    work = testTemp('toma-name-counts-')
    const core = await fixtureCorePath(entry!.id)
    program = Program.load(Core.open(core), fixtureFlags(entry!))
    for (const stage of ['model', 'graph'] as const) {
      const file = path.join(work, `${stage}.toma-index`)
      analyzeCore(core, fixtureFlags(entry!), undefined, file, program, {workers: 1, stage})
      indexes[stage] = HeapIndex.open(file)!
    }
  }, 120_000)
  afterAll(() => {
    for (const index of Object.values(indexes)) index.close()
    program?.core.close()
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it.each(['model', 'graph'])('%s stage: the stored counts are a count of the index\'s own columns', stage => {
    const index = indexes[stage]!
    const recount = countNames(index.objects, index.columns.type(), index.columns.via(), index.spanSizeClass, index.meta.typeNames.length + 1)
    expect(index.nameCounts()).toEqual(recount)
    // Not empty: named and unnamed objects, several tiers.
    expect(recount['type.liveObjects'].some(n => n > 0)).toBe(true)
    expect(recount['sizeClass.untypedObjects'].some(n => n > 0)).toBe(true)
    expect(recount['type.viaObjects'].length).toBe((index.meta.typeNames.length + 1) * TIERS)
  })

  it('classes: each name\'s objects and bytes are its live objects\', counted one by one', () => {
    const index = indexes.graph!
    const types = index.columns.type()
    const byName = new Map<string, {objects: number; bytes: number}>()
    index.objects.forEachObject((id, _start, size) => {
      const name = index.typeName(types[id]!)
      if (name === null) return
      const c = byName.get(name) ?? {objects: 0, bytes: 0}
      c.objects++
      c.bytes += size
      byName.set(name, c)
    }, LIVE)
    const listed = classCounts(index).types
    expect(listed.length).toBe(byName.size)
    for (const t of listed) expect({objects: t.objects, bytes: t.bytes}, t.type).toEqual(byName.get(t.type))
    // Largest first.
    for (let i = 1; i < listed.length; i++) expect(listed[i - 1]!.bytes).toBeGreaterThanOrEqual(listed[i]!.bytes)
  })
})
