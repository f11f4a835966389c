import {expect, it} from 'vitest'
import {Warnings} from '../../src/heap/warnings.js'

// The parallel scan collects warnings per range and merges them in range order: the result must be
// the one adding them all in that order would give, kept list and counts, past the per-kind limit too.
it('merging collections in order equals adding every warning in that order, past the 1000-per-kind limit', () => {
  const pieces = [
    [1200, 'scan'],
    [5, 'roots'],
    [300, 'scan'],
    [0, 'scan'],
    [990, 'roots'],
  ] as const
  const sequential = new Warnings()
  const merged = new Warnings()
  let k = 0
  for (const [n, kind] of pieces) {
    const piece = new Warnings()
    for (let i = 0; i < n; i++, k++) {
      sequential.add(kind, `w${k}`, k)
      piece.add(kind, `w${k}`, k)
    }
    merged.merge(piece)
  }
  expect(merged.list).toEqual(sequential.list)
  expect([...merged.counts]).toEqual([...sequential.counts])
  expect(merged.counts.get('scan')).toBe(1500)
  expect(merged.list.filter(w => w.kind === 'roots').length).toBe(995)
  expect(merged.list.filter(w => w.kind === 'scan').length).toBe(1000)
})
