import {describe, expect, it} from 'vitest'
import {addr, fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {fixtureCorePath, fixtureFlags} from '../helpers/fixture-core.js'
import {sharedAnalysis} from '../helpers/shared-analysis.js'
import {unreachableObjects} from '../helpers/unreachable.js'

describe.each(fixtureIndex().map(f => [f.id] as const))('reachability on %s', id => {
  it('finds exactly the deliberate leaks among what the program allocated', async () => {
    const {program, truth} = await openFixture(id)
    const {unreachable} = unreachableObjects(program)
    for (const o of truth.objects) expect(unreachable.has(addr(o.address)), `${o.name} leaked=${o.leaked}`).toBe(o.leaked)
    // The rest were allocated before the program's hooks existed (by the libraries' start-up,
    // e.g. the MallocExtension instance TCMalloc itself replaces and drops): none is in the record.
    const recorded = new Set(truth.live.map(([a]) => addr(a)))
    const leakedByProgram = [...unreachable].filter(a => recorded.has(a))
    expect(leakedByProgram.sort()).toEqual(truth.objects.filter(o => o.leaked).map(o => addr(o.address)).sort())
    program.core.close()
  })
})

it('toma leaks lists the leaked objects, largest first, with the cycle members pointing at each other', async () => {
  const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
  const {truth} = await openFixture(entry.id)
  const flags = fixtureFlags(entry)
  // The run's one analysis of this core with these flags (cli/retention queries it too).
  const {index} = await sharedAnalysis(await fixtureCorePath(entry.id), ['--exe', flags.exe, '--tcmalloc', flags.tcmalloc!])
  const r = await runToma(['leaks', index, '--json'])
  expect(r.status, r.stderr).toBe(0)
  const leaks = JSON.parse(r.stdout)
  const listed = new Map(leaks.largest.map((o: {address: string}) => [o.address, o]))
  for (const o of truth.objects.filter(o => o.leaked)) expect(listed.has(o.address), o.name).toBe(true)
  const cycleX = truth.objects.find(o => o.name === 'leakCycleX')!
  expect((listed.get(cycleX.address) as {pointedToBy: number; type: string}).pointedToBy).toBe(1)
  expect((listed.get(cycleX.address) as {type: string}).type).toBe(cycleX.class)
  const sizes = leaks.largest.map((o: {size: number}) => o.size)
  expect(sizes).toEqual([...sizes].sort((a: number, b: number) => b - a))
})
