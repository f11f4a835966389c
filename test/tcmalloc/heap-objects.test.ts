import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {analyzeCore, type Analysis} from '../../src/pipeline/analyze-core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {heapObjects} from '../../src/heap/objects.js'
import {ANY_STATE, type HeapObjects} from '../../src/heap/objects.js'
import {LIVE} from '../../src/heap/states.js'
import {SlotFinder} from '../../src/naming/slot-finder.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

// The one iteration and lookup API (viewcore's ForEachObject / FindObject): the in-memory model
// and the index answer through it, and give the same objects, which are the process's own.
const chosen = fixtureIndex().filter(f => ['v2.10-shared', 'v2.18.1-minimal'].includes(f.id))
let work: string
beforeAll(() => {
  work = testTemp('toma-objects-')
})
afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

function slots(objects: HeapObjects, state: number) {
  const ids: number[] = []
  const starts: number[] = []
  const sizes: number[] = []
  objects.forEachObject((id, start, size) => {
    ids.push(id)
    starts.push(start)
    sizes.push(size)
  }, state)
  return {ids, starts, sizes}
}

describe.each(chosen.map(f => [f.id, f] as const))('HeapObjects on %s', (id, entry) => {
  let analysis: Analysis
  let index: HeapIndex
  let truth: Truth
  beforeAll(async () => {
    const indexPath = path.join(work, `${id}.toma-index`)
    analysis = analyzeCore(await fixtureCorePath(id), fixtureFlags(entry), undefined, indexPath)
    index = HeapIndex.open(indexPath)!
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, id, 'truth.json'), 'utf8'))
  })
  afterAll(() => index.file.close())

  it('the model and the index visit the same slots, in address order, with or without a state filter', () => {
    const model = heapObjects(analysis.heap)
    for (const state of [ANY_STATE, LIVE]) {
      const a = slots(model, state)
      expect(slots(index.objects, state)).toEqual(a)
      for (let i = 1; i < a.starts.length; i++) expect(a.starts[i]! > a.starts[i - 1]!).toBe(true)
      // The cursor (for loops that await) gives the same sequence as the callback.
      const c = index.objects.cursor(state)
      const viaCursor: number[] = []
      while (c.next()) viaCursor.push(c.index)
      expect(viaCursor).toEqual(a.ids)
    }
    expect(slots(model, ANY_STATE).ids).toEqual([...Array(analysis.heap.state.length).keys()])
  })

  it('sizeOf gives every slot its size as the walk over the slots does, in address order and out of it', () => {
    const {ids, sizes} = slots(index.objects, ANY_STATE)
    const wrong = (order: number[]) => order.filter(k => index.objects.sizeOf(ids[k]!) !== sizes[k])
    expect(wrong([...ids.keys()])).toEqual([])
    // Backwards and strided: the span it found last is not the one asked for.
    expect(wrong([...ids.keys()].reverse())).toEqual([])
    expect(wrong([...ids.keys()].filter(k => k % 7 === 0).concat([...ids.keys()].filter(k => k % 7 !== 0)))).toEqual([])
    expect(new Set(sizes).size).toBeGreaterThan(1)
  })

  it('the live objects it visits are the process\'s own record, plus exactly the bytes allocated before its hooks', () => {
    const live = slots(heapObjects(analysis.heap), LIVE)
    const seen = new Map(live.starts.map((s, i) => [s, live.sizes[i]!]))
    const recorded = new Set(truth.live.map(([a]) => addr(a)))
    expect([...recorded].filter(a => !seen.has(a))).toEqual([])
    const extraBytes = [...seen].filter(([a]) => !recorded.has(a)).reduce((n, [, size]) => n + size, 0)
    expect(extraBytes).toBe(truth.preHookAllocatedBytes)
  })

  it('findObject gives every manifest object from any address inside it, the same in the model and the index', () => {
    const model = heapObjects(analysis.heap)
    for (const o of truth.objects) {
      for (const inside of [addr(o.address), addr(o.address) + o.size - 1]) {
        const found = model.findObject(inside)!
        expect(found.start).toBe(addr(o.address))
        expect(found.size).toBeGreaterThanOrEqual(o.size)
        expect(index.objects.findObject(inside)).toEqual(found)
        expect(index.objects.object(found.index)).toEqual(found)
        expect(analysis.heap.state[found.index]).toBe(LIVE)
      }
    }
    // Below the heap, and past the last span, there is no object.
    expect(model.findObject(0x1000)).toBeUndefined()
    expect(new SlotFinder(model).find(0x1000)).toBe(false)
    const last = analysis.heap.spans.count - 1
    expect(model.findObject(analysis.heap.spans.start[last]! + analysis.heap.spans.pages[last]! * analysis.heap.pageSize)).toBeUndefined()
  })

  it('SlotFinder (the naming tiers\' page table) finds the slot findObject finds, at every slot\'s first and last byte and just past it', () => {
    const model = heapObjects(analysis.heap)
    const finder = new SlotFinder(model)
    const {starts, sizes} = slots(model, ANY_STATE)
    const differ: number[] = []
    for (let i = 0; i < starts.length; i++) {
      for (const at of [starts[i]!, starts[i]! + sizes[i]! - 1, starts[i]! + sizes[i]!]) {
        const want = model.findObject(at)
        const got = finder.find(at) ? {index: finder.index, start: finder.start, size: finder.size} : undefined
        if (JSON.stringify(got) !== JSON.stringify(want && {index: want.index, start: want.start, size: want.size})) differ.push(at)
      }
    }
    expect(differ).toEqual([])
  })
})
