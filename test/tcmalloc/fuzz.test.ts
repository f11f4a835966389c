import fs from 'node:fs'
import path from 'node:path'
import {expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {TomaError} from '../../src/errors.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

// Seeded damage to TCMalloc's own structures (span records, central cache, page-heap free lists,
// thread caches): whatever the words become (0, a page-aligned number, a pointer to another of
// these structures, all ones), analysis ends with a model and warnings, or one TomaError; never
// anything else (no TypeError, RangeError, hang or runaway memory). TOMA_FUZZ_SEED and
// TOMA_FUZZ_ROUNDS run other or longer series by hand.
const ROUNDS = Number(process.env.TOMA_FUZZ_ROUNDS ?? 12)
it.each(['v2.10-shared', 'v2.18.1-shared'])('survives random damage to the allocator\'s structures (%s)', async id => {
  const entry = fixtureIndex().find(f => f.id === id)!
  const original = await fixtureCorePath(id)
  const clean = analyzeHeap(Program.load(Core.open(original), fixtureFlags(entry)))
  const g = clean.globals
  const targets: number[] = []
  for (let s = 0; s < clean.spans.count; s++) for (let k = 0; k < 6; k++) targets.push(clean.spans.record[s]! + k * 8)
  for (let k = 0; k < 128 * 1216; k += 8) targets.push(g.centralCache + k)
  for (const c of clean.threadCaches) for (let k = 0; k < g.layout.threadCache.objectSize; k += 8) targets.push(c.address + k)
  for (let k = 0; k < 128 * 96; k += 8) targets.push(g.pageHeap + g.layout.pageHeap.free + k)
  let seed = Number(process.env.TOMA_FUZZ_SEED ?? 20261122)
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const bytes = fs.readFileSync(original)
  const core = Core.open(original)
  const damaged = path.join(testTemp('toma-fuzz-'), 'core')
  let withWarnings = 0
  const silent: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const copy = Buffer.from(bytes)
    for (let m = 0; m < 20; m++) {
      const at = targets[random() % targets.length]!
      const seg = core.memory.segmentAt(at)!
      const choice = random() % 4
      const value = choice === 0 ? 0n : choice === 1 ? BigInt(random()) * 4096n : choice === 2 ? BigInt(targets[random() % targets.length]!) : 0xffff_ffff_ffff_ffffn
      copy.writeBigUInt64LE(value, seg.fileOffset + (at - seg.start))
    }
    fs.writeFileSync(damaged, copy)
    try {
      const program = Program.load(Core.open(damaged), fixtureFlags(entry))
      const heap = analyzeHeap(program)
      scanHeapGraph(program, heap)
      if (heap.warnings.total > 0) withWarnings++
      const same = heap.totals.bytes.every((b, i) => b === clean.totals.bytes[i])
      const crossOk = heap.crossCheck.every(c => c.toma === c.tcmalloc)
      if (!same && heap.warnings.total === 0 && crossOk) silent.push(round)
      program.core.close()
    } catch (e) {
      expect(e, `round ${round}: ${(e as Error).stack}`).toBeInstanceOf(TomaError)
    }
  }
  // The damage is seen, and no round changed the answer without saying so (a warning, or a
  // figure that no longer agrees with TCMalloc's counters).
  expect(withWarnings).toBeGreaterThan(0)
  expect(silent).toEqual([])
  core.close()
})
