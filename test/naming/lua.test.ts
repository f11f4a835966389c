import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {pokeU64} from '../helpers/damage-core.js'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 30, Lua: the objects of two embedded Lua states, 5.4 and again 5.3 and 5.1 (fixtures/luademo/README.md), named from
// their collectors' lists, with the blocks they own, and which lua_State owns them. Every expected
// value is what the process recorded about its own objects (truth.json), walking the same lists
// with Lua's own headers and checking what its scripts keep through lua_topointer.

const FIXTURES = fileURLToPath(new URL('../../fixtures/luademo', import.meta.url))
const TCMALLOC = fileURLToPath(new URL('../../fixtures/cores/v2.10-shared/libtcmalloc.so.4', import.meta.url))

interface LuaTruth {
  release: string
  states: Array<{index: number; block: number; mainthread: number; global: number; objects: number; checkedByApi: number}>
  /** [state, address, block, size, name] */
  objects: Array<[number, number, number, number, string]>
  /** [state, block, size, name, owner] */
  storage: Array<[number, number, number, string, number]>
}

interface Expected {
  state: number
  name: string
  kind: 'lua object' | 'lua storage'
  size: number
}

/** What toma named with the runtime tier, and the live heap. */
interface Named {
  index: HeapIndex
  byStart: Map<number, {name: string; kind: string}>
  liveBytes: number
  namedBytes: number
  notes: string[]
  warnings: string[]
}

function readNamed(indexPath: string): Named {
  const index = HeapIndex.open(indexPath)!
  const byStart = new Map<number, {name: string; kind: string}>()
  const kindOf = new Map(index.meta.typeNames.map((n, i) => [n, index.meta.typeKinds[i]!]))
  let liveBytes = 0
  let namedBytes = 0
  index.objects.forEachObject((slot, start, size) => {
    if (index.state(slot) !== 'live') return
    liveBytes += size
    const name = index.type(slot)
    if (name !== null) namedBytes += size
    if (index.via(slot) !== 'runtime') return
    byStart.set(start, {name: name!, kind: kindOf.get(name!)!})
  })
  const naming = index.meta.naming
  return {index, byStart, liveBytes, namedBytes, notes: naming.notes, warnings: naming.warnings.map(w => w.message)}
}

async function analyze(core: string, exe: string, work: string): Promise<string> {
  const indexPath = path.join(work, path.basename(core) + '.toma-index')
  const a = await runToma(['analyze', core, '--exe', exe, '--tcmalloc', TCMALLOC, '--index', indexPath, '--json'], {cwd: work})
  expect(a.status, a.stderr).toBe(0)
  return indexPath
}

/** Per name: how many the truth lists, how many toma named right, how many it named that the truth does not have so. */
function compare(named: Named, expected: Map<number, Expected>): Map<string, {truth: number; right: number; wrong: number}> {
  const per = new Map<string, {truth: number; right: number; wrong: number}>()
  const entry = (name: string) => per.get(name) ?? per.set(name, {truth: 0, right: 0, wrong: 0}).get(name)!
  for (const [block, e] of expected) {
    entry(e.name).truth++
    const got = named.byStart.get(block)
    if (got && got.name === e.name && got.kind === e.kind) entry(e.name).right++
  }
  for (const [start, got] of named.byStart) {
    const e = expected.get(start)
    if (!(e && e.name === got.name && e.kind === got.kind)) entry(got.name).wrong++
  }
  return per
}

/** Every block a truth names, by its first byte. */
function expectedBlocks(truth: LuaTruth): Map<number, Expected> {
  const expected = new Map<number, Expected>()
  for (const [state, , block, size, name] of truth.objects) expected.set(block, {state, name, kind: 'lua object', size})
  for (const [state, block, size, name] of truth.storage) expected.set(block, {state, name, kind: 'lua storage', size})
  return expected
}

describe.each([
  {version: '5.4', release: 'Lua 5.4.4'},
  {version: '5.3', release: 'Lua 5.3.6'},
  {version: '5.1', release: 'Lua 5.1.5'},
])('Lua $version objects named from their collectors\' lists (luademo/$version)', ({version, release}) => {
  const DIR = path.join(FIXTURES, version)
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as LuaTruth
  const expected = expectedBlocks(truth)
  let work: string
  let named: Named
  let core: string

  beforeAll(async () => {
    work = testTemp('toma-lua-')
    core = await brotliCorePath(path.join(DIR, 'core.br'))
    named = readNamed(await analyze(core, path.join(DIR, 'luademo'), work))
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('the fixture is what its README says: its release, two states, every kind of object', () => {
    expect(truth.release).toBe(release)
    expect(truth.states).toHaveLength(2)
    const names = new Set([...expected.values()].map(e => e.name))
    for (const n of ['lua:state', 'lua:table', 'lua:string', 'lua:closure', 'lua:userdata', 'lua:thread', 'lua:proto', 'lua:upvalue',
      'lua:table array', 'lua:table nodes', 'lua:stack', 'lua:callinfo', 'lua:string table', 'lua:proto code', 'lua:proto constants']) {
      expect(names, n).toContain(n)
    }
    for (const s of truth.states) expect(s.checkedByApi).toBeGreaterThan(900)
  })

  it('names every object and owned block the truth lists, and nothing else (recall and precision 100 % per name)', () => {
    const per = compare(named, expected)
    for (const [name, c] of per) {
      expect({name, right: c.right, wrong: c.wrong}).toEqual({name, right: c.truth, wrong: 0})
    }
    expect(named.byStart.size).toBe(expected.size)
    expect(named.warnings).toEqual([])
  })

  it('the sizes Lua asked for fit the blocks named', () => {
    for (const [block, e] of expected) {
      const o = named.index.objects.findObject(block)!
      expect(o.start).toBe(block)
      expect(e.size).toBeLessThanOrEqual(o.size)
    }
  })

  it('tells which lua_State owns how many objects and blocks', () => {
    for (const s of truth.states) {
      const objects = truth.objects.filter(o => o[0] === s.index).length
      const storage = truth.storage.filter(o => o[0] === s.index).length
      expect(objects).toBe(s.objects)
      const note = named.notes.find(n => n.startsWith(`[lua] lua_State 0x${s.mainthread.toString(16)} (Lua ${version}, `))
      expect(note, named.notes.join('\n')).toBeDefined()
      expect(note).toContain(`global_State 0x${s.global.toString(16)}`)
      expect(note).toMatch(new RegExp(`: ${objects} objects \\(\\d+ bytes: .*\\) and ${storage} blocks they own`))
    }
  })

  it('names at least 90 % of the live bytes', () => {
    const share = named.namedBytes / named.liveBytes
    console.log(`luademo ${version}: ${named.namedBytes} of ${named.liveBytes} live bytes named (${(100 * share).toFixed(1)} %)`)
    expect(share).toBeGreaterThanOrEqual(0.9)
  })

  it('a list whose next field loops back, or leaves the heap, stops there with a warning, and every name given stays right', async () => {
    // Each state's objects in the truth are in allgc's (5.1: rootgc's) order after the state
    // itself, upvalues aside (5.3's are on no list, 5.1's open ones on their thread's). State 0:
    // the 200th's next points at the 100th, a cycle the walk must stop at instead of naming
    // anything twice or looping. State 1: the 150th's next points at 0x10.
    const listed = (state: number) => truth.objects.filter(o => o[0] === state && o[4] !== 'lua:state' && o[4] !== 'lua:upvalue')
    const state0 = listed(0)
    const state1 = listed(1)
    const damaged = path.join(work, 'cut.core')
    fs.copyFileSync(core, damaged)
    const original = Core.open(core)
    pokeU64(damaged, original, state0[200]![1], state0[100]![1])
    pokeU64(damaged, original, state1[150]![1], 0x10)
    const cut = readNamed(await analyze(damaged, path.join(DIR, 'luademo'), work))
    const warned = (s: LuaTruth['states'][number], what: RegExp) =>
      cut.warnings.some(w => w.startsWith(`[lua] lua_State 0x${s.mainthread.toString(16)}: `) && what.test(w))
    expect(warned(truth.states[0]!, /: (allgc|rootgc): .* met twice \(a cycle\): the walk of that list stops/), cut.warnings.join('\n')).toBe(true)
    expect(warned(truth.states[1]!, /: (allgc|rootgc): an object outside the core: the walk of that list stops/), cut.warnings.join('\n')).toBe(true)
    const per = compare(cut, expected)
    let right = 0
    for (const c of per.values()) {
      expect(c.wrong).toBe(0)
      right += c.right
    }
    expect(right).toBeLessThan(expected.size)
    // the objects after each stop, and what they own, are not named (strings past it still are,
    // from the string table's chains, and 5.3's upvalues from a closure before it that shares them)
    for (const after of [state0.slice(201), state1.slice(151)]) {
      const next = after.find(o => o[4] !== 'lua:string' && o[4] !== 'lua:upvalue')!
      expect(cut.byStart.get(next[2])).toBeUndefined()
    }
  })
})
