import fs from 'node:fs'
import path from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {PN_XNUM} from '../../src/core/core-header.js'
import {TomaError} from '../../src/errors.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

const entry = fixtureIndex().find(f => f.id === 'v2.16-shared')!
const temp = testTemp('toma-pn-xnum-')
afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

/**
 * Rewrites a copy of a fixture core the way the kernel writes a core of more than 65534 mappings:
 * e_phnum = PN_XNUM, and one section header (index 0, SHT_NULL) appended at the end of the file
 * whose sh_info holds the real count. `count` overrides that count (to damage it).
 */
function pnXnumCopy(original: string, name: string, count?: number): {file: string; phnum: number} {
  const file = path.join(temp, name)
  fs.copyFileSync(original, file)
  const fd = fs.openSync(file, 'r+')
  const ehdr = Buffer.alloc(64)
  fs.readSync(fd, ehdr, 0, 64, 0)
  const phnum = ehdr.readUInt16LE(56)
  const shoff = fs.fstatSync(fd).size
  const shdr = Buffer.alloc(64)
  shdr.writeUInt32LE(count ?? phnum, 44) // sh_info
  fs.writeSync(fd, shdr, 0, 64, shoff)
  ehdr.writeBigUInt64LE(BigInt(shoff), 40) // e_shoff
  ehdr.writeUInt16LE(64, 58) // e_shentsize
  ehdr.writeUInt16LE(1, 60) // e_shnum
  ehdr.writeUInt16LE(PN_XNUM, 56) // e_phnum
  fs.writeSync(fd, ehdr, 0, 64, 0)
  fs.closeSync(fd)
  return {file, phnum}
}

it('a core whose program headers are counted through PN_XNUM opens and analyses exactly like the original', async () => {
  const original = await fixtureCorePath(entry.id)
  const {file, phnum} = pnXnumCopy(original, 'core')
  expect(phnum).toBeGreaterThan(10)
  const a = Program.load(Core.open(original), fixtureFlags(entry))
  const b = Program.load(Core.open(file), fixtureFlags(entry))
  expect(b.core.memory.segments).toEqual(a.core.memory.segments)
  expect(b.core.threads.map(t => t.tid)).toEqual(a.core.threads.map(t => t.tid))
  const clean = analyzeHeap(a)
  const heap = analyzeHeap(b)
  expect(heap.warnings.list).toEqual([])
  expect(heap.spans).toEqual(clean.spans)
  expect(heap.state).toEqual(clean.state)
  expect(heap.totals).toEqual(clean.totals)
  expect(heap.crossCheck).toEqual(clean.crossCheck)
  a.core.close()
  b.core.close()
})

it('a PN_XNUM count past the end of the file is one clear error, not a buffer sized by it', async () => {
  const original = await fixtureCorePath(entry.id)
  const {file} = pnXnumCopy(original, 'core-bad', 0xffff_ffff)
  expect(() => Core.open(file)).toThrow(TomaError)
  expect(() => Core.open(file)).toThrow(/truncated core \(program headers end at \d+, file is \d+ bytes\)/)
})
