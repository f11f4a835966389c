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

  it('finds nothing changed between a core and itself', async () => {
    const r = await runToma(['diff', after, after, ...flags, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const d = JSON.parse(r.stdout)
    expect(d.totals.born.objects + d.totals.died.objects).toBe(0)
    // Every live byte is kept: as many as TCMalloc counted allocated.
    expect(d.totals.kept.bytes).toBe(truth.after.phase.counters['generic.current_allocated_bytes'])
    expect(d.growth).toEqual([])
    expect(d.states.every((s: {change: {bytes: number}}) => s.change.bytes === 0)).toBe(true)
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
