import fs from 'node:fs'
import path from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {SPAN} from '../../src/tcmalloc/layout.js'
import {MAX_STACK_DEPTH, STACK_TRACE} from '../../src/tcmalloc/sampled.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {pokeU64} from '../helpers/damage-core.js'
import {testTemp} from '../helpers/test-temp.js'
import {checkAgainstHeapSample} from './heap-sample.js'

// The heap model's sampled objects against the process's own GetHeapSample text (truth.heapSample).
const sampled = fixtureIndex().find(f => f.id === 'v2.10-sampled')!
const temp = testTemp('toma-sampled-')
afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

const open = async (id: string, file?: string) => {
  const entry = fixtureIndex().find(f => f.id === id)!
  return Program.load(Core.open(file ?? (await fixtureCorePath(id))), fixtureFlags(entry))
}

it('v2.10-sampled: one sample per line of GetHeapSample (its size and stack), the period of its header, found by symbols and by signatures alike', async () => {
  const truth: Truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, sampled.id, 'truth.json'), 'utf8'))
  for (const signaturesOnly of [false, true]) {
    const heap = analyzeHeap(await open(sampled.id), {signaturesOnly})
    expect(heap.warnings.list).toEqual([])
    checkAgainstHeapSample(heap.sampled, truth.heapSample!)
  }
})

it('a core without sampling has no samples and no warnings', async () => {
  for (const id of ['v2.10-shared', 'v2.10-minimal']) {
    const heap = analyzeHeap(await open(id))
    expect(heap.sampled.span.length).toBe(0)
    expect(heap.warnings.list.filter(w => w.kind === 'sampled')).toEqual([])
  }
})

it('a damaged StackTrace or sampled list gives a warning with its address and keeps the rest', async () => {
  const original = await fixtureCorePath(sampled.id)
  const clean = analyzeHeap(await open(sampled.id))
  const s = clean.spans
  const [first, second] = clean.sampled.span
  const trace = s.freeHead[first!]!
  const core = Core.open(original)
  const damaged = path.join(temp, 'core')
  fs.copyFileSync(original, damaged)
  // One StackTrace claims a depth beyond kMaxStackDepth; another span's record leaves the sampled list.
  pokeU64(damaged, core, trace + STACK_TRACE.depth, MAX_STACK_DEPTH + 1000)
  const prev = core.memory.readU64(s.record[second!]! + SPAN.prev)!
  pokeU64(damaged, core, prev + SPAN.next, 0x7ff0_dead_b000)
  core.close()

  const heap = analyzeHeap(await open(sampled.id, damaged))
  const w = heap.warnings.list.filter(x => x.kind === 'sampled')
  expect(w.some(x => x.addresses.includes(s.record[first!]!) && /depth 1031, more than 31/.test(x.message))).toBe(true)
  expect(w.some(x => /sampled_objects_ .*links 0x7ff0deadb000/.test(x.message))).toBe(true)
  expect(heap.sampled.span.length).toBe(clean.sampled.span.length - 1)
  expect(Array.from(heap.sampled.span)).toEqual(Array.from(clean.sampled.span).filter(x => x !== first))
  // Without a list to follow, the order is the samples' address order.
  expect(Array.from(heap.sampled.order)).toEqual(Array.from(heap.sampled.span, (_, i) => i))
})
