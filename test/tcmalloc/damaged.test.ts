import fs from 'node:fs'
import path from 'node:path'
import {expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!

/** Writes a 64-bit value into a copy of the core at a process address. */
function poke(file: string, core: Core, address: number, value: number) {
  const seg = core.memory.segmentAt(address)!
  const buf = Buffer.alloc(8)
  buf.writeBigUInt64LE(BigInt(value))
  const fd = fs.openSync(file, 'r+')
  fs.writeSync(fd, buf, 0, 8, seg.fileOffset + (address - seg.start))
  fs.closeSync(fd)
}

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

  const damaged = path.join(testTemp('toma-damaged-'), 'core')
  fs.copyFileSync(original, damaged)
  poke(damaged, core, second, first)
  const bogus = 0x7ff0_dead_b000
  poke(damaged, core, entryAddress, bogus)
  core.close()

  const heap = analyzeHeap(Program.load(Core.open(damaged), fixtureFlags(entry)))
  const w = heap.warnings.list
  // The cycle: the first object comes round again, named with the span and the object.
  expect(w.some(x => x.kind === 'free-list' && /already central-cache/.test(x.message) && x.addresses.includes(first))).toBe(true)
  // The span's count no longer agrees with its refcount, and the class counter disagrees.
  expect(w.some(x => x.kind === 'span' && /refcount/.test(x.message) && x.addresses.includes(s.record[listSpan]!))).toBe(true)
  expect(w.some(x => x.kind === 'central-cache')).toBe(true)
  // The overwritten entry is reported with the pointer it holds; the span it hid is gone from the model.
  expect(w.some(x => x.kind === 'span' && x.addresses.includes(bogus))).toBe(true)
  expect(heap.spans.count).toBe(s.count - 1)
  // What was consistent is still there: every other span, and the cross-check shows the damage.
  expect(heap.crossCheck.find(c => c.property === 'generic.heap_size')!.toma).toBe(clean.crossCheck.find(c => c.property === 'generic.heap_size')!.toma - s.pages[victim]! * layout.pageSize)
})
