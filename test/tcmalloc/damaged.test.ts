import fs from 'node:fs'
import path from 'node:path'
import {expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {SPAN} from '../../src/tcmalloc/layout.js'
import {IN_USE, ON_NORMAL_FREELIST, ON_RETURNED_FREELIST} from '../../src/tcmalloc/spans.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, type Truth} from '../helpers/fixture-core.js'
import {liveObjects} from './live-set.js'
import {pokeU64} from '../helpers/damage-core.js'
import {testTemp} from '../helpers/test-temp.js'

const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const temp = testTemp('toma-damaged-')

it('a damaged core (a cyclic free list, a page-map entry overwritten) gives warnings with addresses, not a crash', async () => {
  const original = await fixtureCorePath(entry.id)
  const clean = analyzeHeap(Program.load(Core.open(original), fixtureFlags(entry)))
  expect(clean.warnings.total).toBe(0)
  const s = clean.spans

  // A small span whose own free list holds at least two objects: make the second point back to the first.
  const core = Core.open(original)
  const listSpan = [...Array(s.count).keys()].find(i => s.location[i] === IN_USE && s.sizeClass[i]! > 0 && s.freeHead[i] !== 0 && (core.memory.readU64(s.freeHead[i]!) ?? 0) !== 0)!
  const first = s.freeHead[listSpan]!
  const second = core.memory.readU64(first)!
  // Another in-use small span, one page long, whose page-map entry we point at nothing.
  const victim = [...Array(s.count).keys()].find(i => i !== listSpan && s.location[i] === IN_USE && s.sizeClass[i]! > 0 && s.pages[i] === 1)!
  const layout = clean.globals.layout
  if (layout.pageMap.kind !== 2) throw new Error('expects PageMap2')
  const page = s.start[victim]! / layout.pageSize
  const leaf = core.memory.readU64(clean.globals.pageHeap + layout.pageHeap.pagemap + Math.floor(page / 2 ** layout.pageMap.leafBits) * 8)!
  const entryAddress = leaf + (page % 2 ** layout.pageMap.leafBits) * 8
  expect(core.memory.readU64(entryAddress)).toBe(s.record[victim])

  const damaged = path.join(temp, 'core')
  fs.copyFileSync(original, damaged)
  pokeU64(damaged, core, second, first)
  const bogus = 0x7ff0_dead_b000
  pokeU64(damaged, core, entryAddress, bogus)
  core.close()

  const heap = analyzeHeap(Program.load(Core.open(damaged), fixtureFlags(entry)))
  const w = heap.warnings.list
  // The cycle: the first object comes round again, named with the span and the object.
  expect(w.some(x => x.kind === 'free-list' && /already central-cache/.test(x.message) && x.addresses.includes(first))).toBe(true)
  // The finding: the object reached twice, the link that leads back to it (all 64 bits), and the
  // objects the span's count puts behind it.
  const f = heap.damage.findings.find(x => x.structureAddress === s.record[listSpan])!
  expect(f).toMatchObject({kind: 'on-a-list-twice', entry: second, slot: second, value: `0x${first.toString(16)}`})
  expect(f.objectsBehind).toBe(s.objectCount[listSpan]! - s.refcount[listSpan]! - 2)
  // Those its own links still tell are counted free; if some are not, the span's count no longer
  // agrees with its refcount, and the class counter disagrees.
  expect(f.recovered).toBeLessThanOrEqual(f.objectsBehind)
  const lost = f.objectsBehind > f.recovered
  expect(w.some(x => x.kind === 'span' && /refcount/.test(x.message) && x.addresses.includes(s.record[listSpan]!))).toBe(lost)
  expect(w.some(x => x.kind === 'central-cache' && x.message.startsWith(`class ${s.sizeClass[listSpan]}: spans' free lists hold`))).toBe(lost)
  // The overwritten entry is reported with the pointer it holds; the span it hid is gone from the model.
  expect(w.some(x => x.kind === 'span' && x.addresses.includes(bogus))).toBe(true)
  expect(heap.spans.count).toBe(s.count - 1)
  // What was consistent is still there: every other span, and the cross-check shows the damage.
  expect(heap.crossCheck.find(c => c.property === 'generic.heap_size')!.toma).toBe(clean.crossCheck.find(c => c.property === 'generic.heap_size')!.toma - s.pages[victim]! * layout.pageSize)
})

/** A copy of the fixture core with one span record's length set to `pages`; the clean model and the damaged one. */
async function withSpanLength(pick: (heap: ReturnType<typeof analyzeHeap>, s: number) => boolean, pages: number) {
  const original = await fixtureCorePath(entry.id)
  const core = Core.open(original)
  const clean = analyzeHeap(Program.load(core, fixtureFlags(entry)))
  const s = clean.spans
  // The first such span, so other spans and their live objects follow it.
  const victim = [...Array(s.count).keys()].find(i => pick(clean, i))!
  expect(s.count - victim).toBeGreaterThan(10)
  const damaged = path.join(temp, `core-${pages}`)
  fs.copyFileSync(original, damaged)
  pokeU64(damaged, core, s.record[victim]! + SPAN.length, pages)
  core.close()
  const program = Program.load(Core.open(damaged), fixtureFlags(entry))
  const heap = analyzeHeap(program)
  program.core.close()
  fs.rmSync(damaged)
  return {clean, heap, record: s.record[victim]!}
}

const truth = () => JSON.parse(fs.readFileSync(path.join(path.dirname(fixtureFlags(entry).exe), 'truth.json'), 'utf8')) as Truth

/** Every span of the clean model is still there, with its pages, and the live set is still the process's own record. */
function expectHeapIntact(heap: ReturnType<typeof analyzeHeap>, clean: ReturnType<typeof analyzeHeap>) {
  expect(Array.from(heap.spans.record)).toEqual(Array.from(clean.spans.record))
  expect(Array.from(heap.spans.pages)).toEqual(Array.from(clean.spans.pages))
  const live = liveObjects(heap)
  expect([...live]).toEqual([...liveObjects(clean)])
  expect(truth().live.filter(([a]) => !live.has(addr(a)))).toEqual([])
}

it('a small-object span claiming 2^30 pages is taken as its class\'s pages with a warning naming its record (issue 8, reproduction 1)', async () => {
  const {clean, heap, record} = await withSpanLength((h, i) => h.spans.location[i] === IN_USE && h.spans.sizeClass[i]! > 0, 2 ** 30)
  const w = heap.warnings.list.filter(x => x.kind === 'span' && x.addresses.includes(record))
  expect(w.map(x => x.message)).toEqual([expect.stringMatching(/has 1073741824 pages, the class has \d+; taken as its class's \d+ pages/)])
  expectHeapIntact(heap, clean)
})

it('a free span claiming 2^24 pages is cut to the pages the page map gives it, and no later span vanishes (issue 8, reproduction 2)', async () => {
  const {clean, heap, record} = await withSpanLength((h, i) => h.spans.location[i] === ON_NORMAL_FREELIST || h.spans.location[i] === ON_RETURNED_FREELIST, 2 ** 24)
  const w = heap.warnings.list.filter(x => x.kind === 'span' && x.addresses.includes(record))
  expect(w.map(x => x.message)).toEqual([expect.stringMatching(/claims 16777216 pages, .*; cut to the \d+ page\(s\) the page map maps to it/)])
  expectHeapIntact(heap, clean)
})

it('a large live span claiming 2^24 pages is cut the same way, its object and every later one kept (issue 8, reproduction 2)', async () => {
  const {clean, heap, record} = await withSpanLength((h, i) => h.spans.location[i] === IN_USE && h.spans.sizeClass[i] === 0, 2 ** 24)
  expect(heap.warnings.list.filter(x => x.kind === 'span' && x.addresses.includes(record)).map(x => x.message)).toEqual([expect.stringMatching(/cut to the \d+ page\(s\)/)])
  expectHeapIntact(heap, clean)
})
