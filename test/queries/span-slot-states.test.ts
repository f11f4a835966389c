import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HeapIndex} from '../../src/index/heap-index.js'
import fs from 'node:fs'
import path from 'node:path'
import {DamagedIndexError, IndexFile} from '../../src/index/index-file.js'
import {INDEX_DATA_START, indexLayout} from '../helpers/index-layout.js'
import {testTemp} from '../helpers/test-temp.js'
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

  it('refuses stored counts that do not add up to the spans\' slots, naming the index as damaged', () => {
    // The index file damaged since analyze wrote it: span 0's first count one more.
    const bytes = fs.readFileSync(indexPath)
    const entry = indexLayout(bytes).header.arrays['span.slotStates']!
    const damaged = Buffer.from(bytes)
    damaged.writeUInt32LE(damaged.readUInt32LE(INDEX_DATA_START + entry.offset) + 1, INDEX_DATA_START + entry.offset)
    const work = testTemp('toma-slot-states-')
    try {
      fs.writeFileSync(path.join(work, 'damaged.toma-index'), damaged)
      const index = new HeapIndex(IndexFile.open(path.join(work, 'damaged.toma-index'))!)
      opened.push(index)
      expect(() => spanSlotStates(index)).toThrow(DamagedIndexError)
      expect(() => spanSlotStates(index)).toThrow(/damaged toma index \(span\.slotStates: span 0: its slots' states are not all among/)
    } finally {
      for (const i of opened.splice(0)) i.close()
      fs.rmSync(work, {recursive: true, force: true})
    }
  })
})
