import fs from 'node:fs'
import path from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {outEdges} from '../../src/graph/csr.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {Program} from '../../src/program/program.js'
import {modelHeap} from '../../src/allocators.js'
import {objectAt} from '../../src/heap/objects.js'
import {pokeU64} from '../helpers/damage-core.js'
import {addr, fixtureCorePath, fixtureFlags, fixtureIndex, type Truth} from '../helpers/fixture-core.js'
import {edgeOffsetsOf} from '../helpers/edge-offsets.js'
import {testTemp} from '../helpers/test-temp.js'

const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const temp = testTemp('toma-partial-')
afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

const PHDR = 56

/**
 * Splits the PT_LOAD segment holding `hole` into three: before it, the 4 KiB page itself with no
 * bytes in the core (p_filesz 0, as gdb writes pages it could not read), and after it. The new
 * program-header table goes at the end of the file (e_phoff moved, e_phnum + 2).
 */
function cutPage(file: string, hole: number): void {
  const fd = fs.openSync(file, 'r+')
  const ehdr = Buffer.alloc(64)
  fs.readSync(fd, ehdr, 0, 64, 0)
  const phoff = Number(ehdr.readBigUInt64LE(32))
  const phnum = ehdr.readUInt16LE(56)
  const table = Buffer.alloc(phnum * PHDR)
  fs.readSync(fd, table, 0, table.length, phoff)
  const out: Buffer[] = []
  for (let i = 0; i < phnum; i++) {
    const ph = table.subarray(i * PHDR, (i + 1) * PHDR)
    const vaddr = Number(ph.readBigUInt64LE(16))
    const filesz = Number(ph.readBigUInt64LE(32))
    if (ph.readUInt32LE(0) !== 1 || hole < vaddr || hole + 4096 > vaddr + filesz) {
      out.push(ph)
      continue
    }
    const offset = Number(ph.readBigUInt64LE(8))
    const piece = (start: number, size: number, fileSize: number) => {
      const p = Buffer.from(ph)
      p.writeBigUInt64LE(BigInt(offset + (start - vaddr)), 8)
      p.writeBigUInt64LE(BigInt(start), 16)
      p.writeBigUInt64LE(BigInt(start), 24)
      p.writeBigUInt64LE(BigInt(fileSize), 32)
      p.writeBigUInt64LE(BigInt(size), 40)
      out.push(p)
    }
    piece(vaddr, hole - vaddr, hole - vaddr)
    piece(hole, 4096, 0)
    piece(hole + 4096, vaddr + filesz - hole - 4096, vaddr + filesz - hole - 4096)
  }
  expect(out.length).toBe(phnum + 2)
  const end = fs.fstatSync(fd).size
  fs.writeSync(fd, Buffer.concat(out), 0, out.length * PHDR, end)
  ehdr.writeBigUInt64LE(BigInt(end), 32)
  ehdr.writeUInt16LE(out.length, 56)
  fs.writeSync(fd, ehdr, 0, 64, 0)
  fs.closeSync(fd)
}

it('a large object with a page missing from the core is scanned page by page: its other pointers count, the hole is one warning', async () => {
  const original = await fixtureCorePath(entry.id)
  const truth = JSON.parse(fs.readFileSync(path.join(path.dirname(fixtureFlags(entry).exe), 'truth.json'), 'utf8')) as Truth
  const big = truth.objects.find(o => o.name === 'big1m')!
  const start = addr(big.address)
  const target = truth.objects.find(o => o.class !== null)!
  const hole = start + big.size / 2

  const core = Core.open(original)
  const program = Program.load(core, fixtureFlags(entry))
  const clean = modelHeap(program)
  const bigSlot = objectAt(clean, start)!.index
  const targetSlot = objectAt(clean, addr(target.address))!.index
  const cleanGraph = scanHeapGraph(program, clean)
  // The process left big1m without pointers: every edge below comes from the words written here.
  const e = outEdges(cleanGraph, bigSlot)
  expect(e.end - e.start).toBe(0)

  // Pointers to a live manifest object in big1m's first and last pages, and in the page cut out.
  const damaged = path.join(temp, 'core')
  fs.copyFileSync(original, damaged)
  for (const offset of [8, big.size - 16, big.size / 2 + 64]) pokeU64(damaged, core, start + offset, addr(target.address))
  core.close()
  cutPage(damaged, hole)

  const cut = Program.load(Core.open(damaged), fixtureFlags(entry))
  expect(cut.core.memory.whyUnreadable(hole, 1)).toBe('not-dumped')
  const heap = modelHeap(cut)
  expect(heap.warnings.list).toEqual([])
  expect(heap.spans).toEqual(clean.spans)
  const graph = scanHeapGraph(cut, heap)
  const out = outEdges(graph, bigSlot)
  // Offsets found again in the damaged core, as queries find them: the missing page is skipped.
  const offsets = edgeOffsetsOf(cut.core.memory, heap, graph).offset
  const edges = [...Array(out.end - out.start).keys()].map(i => [offsets[out.start + i], graph.outTo[out.start + i]])
  expect(edges).toEqual([
    [8, targetSlot],
    [big.size - 16, targetSlot],
  ])
  expect(graph.unreadableObjects).toBe(cleanGraph.unreadableObjects)
  expect(graph.warnings.list.filter(w => w.addresses.includes(start))).toEqual([
    {kind: 'scan', message: expect.stringMatching(/^object 0x[0-9a-f]+ \(1048576 bytes\): 4096 bytes from 0x[0-9a-f]+ are not in the core \(not-dumped\)/), addresses: [start, hole]},
  ])
  cut.core.close()
})
