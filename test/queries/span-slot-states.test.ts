import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HeapIndex} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {STATES, countSpanSlotStates, spanSlotStates} from '../../src/queries/span-slot-states.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {sharedAnalysis} from '../helpers/shared-analysis.js'

// Each span's slots by state, the one pass over the slots `toma memory` makes (its bytes per state
// and the spans' occupancy read it), against a count slot by slot through the iteration API.
describe('span slot states', () => {
  let indexPath: string
  const opened: HeapIndex[] = []
  const open = () => {
    const index = new HeapIndex(IndexFile.open(indexPath)!)
    opened.push(index)
    return index
  }
  beforeAll(async () => {
    const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
    const f = fixtureFlags(entry)
    indexPath = (await sharedAnalysis(await fixtureCorePath(entry.id), ['--exe', f.exe, '--tcmalloc', f.tcmalloc!])).index
  })
  afterAll(() => {
    for (const i of opened) i.close()
  })

  it("analyze counts every span's slots by state into the index, as the objects' own walk finds them; the count without them is the same", () => {
    const index = open()
    const expected = new Uint32Array(index.spanStart.length * STATES)
    const state = index.objects.state
    index.objects.forEachObject((id, _start, _size, span) => expected[span * STATES + state[id]!]!++)
    const stored = index.spanSlotStates()
    expect(stored).not.toBeNull()
    expect(Array.from(stored!)).toEqual(Array.from(expected))
    // An index made before analyze kept them: counted from the states, the same.
    expect(Array.from(countSpanSlotStates(index.spanFirstObject, index.spanObjectCount, state))).toEqual(Array.from(expected))
    const counts = spanSlotStates(index)
    expect(Array.from(counts)).toEqual(Array.from(expected))
    // Free slots of several states, not only live ones: the fixture has all of them.
    for (let k = 0; k < 4; k++) expect(expected.filter((_, i) => i % STATES === k).some(n => n > 0), `state ${k}`).toBe(true)
    expect(spanSlotStates(index)).toBe(counts)
  })

  it('refuses a slot whose state is none of the states rather than count it in another span', () => {
    const index = open()
    const state = Uint8Array.from(index.objects.state)
    state[index.spanFirstObject[0]!] = STATES + 3
    expect(() => countSpanSlotStates(index.spanFirstObject, index.spanObjectCount, state)).toThrow(/span 0: its slots' states are not all among/)
  })
})
