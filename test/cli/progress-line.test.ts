import {expect, it} from 'vitest'
import {progressLine, terminalProgress} from '../../src/util/terminal-progress.js'

// analyze's progress line on a terminal: each phase with its rate and the time it has left
// (issue 10), measured from the phase's own start.
it('a phase shows its percentage at once, then its rate and estimate once it has run a second', () => {
  expect(progressLine('scan objects', 10, 100, 0.2)).toBe('scan objects 10%')
  expect(progressLine('scan objects', 2_000_000, 8_000_000, 2)).toBe('scan objects 25% · 1.0 M/s · ~6 s left')
  expect(progressLine('page map', 300, 1000, 100)).toBe('page map 30% · 3.0/s · ~4 min left')
  expect(progressLine('roots', 0, 1, 5)).toBe('roots 0%')
  expect(progressLine('summary', 0, 0, 5)).toBe('summary')
})

it('the rate restarts with each phase, and a disabled display writes nothing', () => {
  let clock = 0
  const out: string[] = []
  const bar = terminalProgress(true, t => out.push(t), () => clock)
  bar.update('scan objects', 0, 100)
  clock = 4000
  bar.update('scan objects', 50, 100)
  clock = 5000
  bar.update('reverse edges', 0, 10)
  clock = 7000
  bar.update('reverse edges', 5, 10)
  bar.done()
  expect(out.map(t => t.replace('\r\u001b[K', ''))).toEqual(['scan objects 0%', 'scan objects 50% · 13/s · ~4 s left', 'reverse edges 0%', 'reverse edges 50% · 2.5/s · ~2 s left', ''])
  const none: string[] = []
  const off = terminalProgress(false, t => none.push(t), () => clock)
  off.update('scan objects', 1, 2)
  off.done()
  expect(none).toEqual([])
})
