import fs from 'node:fs'
import path from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import type {AddressSpace} from '../../src/core/address-space.js'
import {addr, fixtureCorePath, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {cutSegmentHolding} from '../helpers/cut-segment.js'
import {testTemp} from '../helpers/test-temp.js'

// AddressSpace.nextReadable lets a walk over an object skip the memory a core lacks at once
// (src/graph/edge-words.ts). Readability changes only at a segment's start, end, present size and
// file size: the oracle tries those boundaries in order with isReadable.
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')
const temp = testTemp('toma-next-readable-')
afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

function oracle(memory: AddressSpace, a: number): number {
  const boundaries = memory.segments.flatMap(s => [s.start, s.end, s.start + s.fileSize, s.start + s.presentSize])
  for (const c of [a, ...boundaries.filter(b => b > a).sort((x, y) => x - y)]) if (memory.isReadable(c, 1)) return c
  return Infinity
}

it.skipIf(!entry)('gives the first readable address at or after any address: in a segment, in a gap, in a segment not dumped', async () => {
  const truth: Truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry!.id, 'truth.json'), 'utf8'))
  const core = path.join(temp, 'core')
  fs.copyFileSync(await fixtureCorePath(entry!.id), core)
  // A heap segment (a manifest object's) made "not dumped", as a filtered core has it.
  const [cutStart, cutEnd] = cutSegmentHolding(core, addr(truth.objects[0]!.address))
  const opened = Core.open(core)
  try {
    const memory = opened.memory
    expect(memory.whyUnreadable(cutStart, 1)).toBe('not-dumped')
    const probes = new Set<number>([0, cutStart, cutStart + 4096, cutEnd - 8, 2 ** 47])
    for (const s of memory.segments) for (const a of [s.start - 4096, s.start - 1, s.start, s.start + 8, s.end - 1, s.end, s.end + 4096]) probes.add(a)
    let skipped = 0
    for (const a of probes) {
      const next = memory.nextReadable(a)
      expect(next, `from 0x${a.toString(16)}`).toBe(oracle(memory, a))
      if (next > a) skipped++
    }
    expect(skipped, 'probes in gaps and in the cut segment').toBeGreaterThan(3)
    expect(memory.nextReadable(cutStart)).toBeGreaterThanOrEqual(cutEnd)
  } finally {
    opened.close()
  }
})
