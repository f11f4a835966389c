import {expect, it} from 'vitest'
import {FreePointerLog, joinFreePointers, KEEP_FREE_POINTERS} from '../../src/graph/free-pointers.js'

it('a range keeps a sample of pointers into free slots, every pointer into a watched (damaged) slot past it, and counts all', () => {
  const log = new FreePointerLog(Uint32Array.from([7, 900]))
  for (let i = 0; i < 2000; i++) log.add(0x1000 + i * 8, 0x9000, 1000 + i)
  log.add(0x8000, 0x9100, 900)
  log.add(0x8008, 0x9200, 7)
  log.add(0x8010, 0x9300, 8)
  const kept = log.finish()
  expect(kept.count).toBe(2003)
  // The sample's end, then the two watched ones (the unwatched third is dropped).
  expect(Array.from(kept.target.subarray(-2))).toEqual([900, 7])
  expect(kept.target.includes(8)).toBe(false)
  expect(kept.word.length).toBeLessThan(2000)
  const joined = joinFreePointers([kept, kept])
  expect(joined.count).toBe(4006)
  expect(joined.word.length).toBe(Math.min(KEEP_FREE_POINTERS, 2 * kept.word.length))
})
