import {describe, expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {firstWordsOf, liveFirstWords} from '../../src/heap/first-words.js'
import {CENTRAL_CACHE, LIVE, THREAD_CACHE, TRANSFER_CACHE} from '../../src/heap/states.js'
import {fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {checkAgainstTruth} from './live-set.js'
import {TakeOnce} from '../../src/util/take-once.js'

// The model reads every in-use slot's first word before its list walks and follows the free
// lists through them; the model stage then takes the live ones for the vtables. Both must be what
// reading the core gives: the links the walks followed, and the words the types are named from.
const chosen = fixtureIndex().filter(f => ['v2.0-minimal', 'v2.10-static', 'v2.18.1-shared'].includes(f.id))

describe.each(chosen.map(f => [f.id] as const))('first words read before the walks, %s', id => {
  it('are each free object\'s link in the core, and once taken the live objects\' words, as a read after the walks gives them', async () => {
    const {program, truth} = await openFixture(id)
    const memory = program.core.memory
    const heap = analyzeHeap(program)
    checkAgainstTruth(heap, truth)
    const fresh = firstWordsOf(memory, heap)
    const spans = heap.spans
    let links = 0
    let live = 0
    const read = heap.slotWords!.take()!
    heap.slotWords = new TakeOnce(read)
    for (let s = 0; s < spans.count; s++) {
      for (let k = 0; k < spans.objectCount[s]!; k++) {
        const i = spans.firstObject[s]! + k
        const st = heap.state[i]!
        if (st === CENTRAL_CACHE || st === TRANSFER_CACHE || st === THREAD_CACHE) {
          expect(read[i]).toBe(memory.readU64(spans.start[s]! + k * spans.objectSize[s]!))
          links++
        } else if (st === LIVE && !Number.isNaN(fresh[i]!)) live++
      }
    }
    expect(links).toBeGreaterThan(100)
    expect(live).toBeGreaterThan(100)
    const handed = liveFirstWords(memory, heap)
    // NaN where not live or not read, in both: compared byte for byte.
    expect(Buffer.compare(Buffer.from(handed.buffer, handed.byteOffset, handed.byteLength), Buffer.from(fresh.buffer, fresh.byteOffset, fresh.byteLength))).toBe(0)
    expect(handed).toBe(read)
    program.core.close()
  })

  it('are handed over once: taken again, they are read anew', async () => {
    const {program} = await openFixture(id)
    const memory = program.core.memory
    const heap = analyzeHeap(program)
    const first = liveFirstWords(memory, heap)
    expect(heap.slotWords!.take()).toBeNull()
    const again = liveFirstWords(memory, heap)
    expect(again).not.toBe(first)
    expect(Buffer.compare(Buffer.from(again.buffer, again.byteOffset, again.byteLength), Buffer.from(first.buffer, first.byteOffset, first.byteLength))).toBe(0)
    program.core.close()
  })
})
