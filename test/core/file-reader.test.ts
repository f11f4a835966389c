import fs from 'node:fs'
import {expect, it} from 'vitest'
import {FileReader} from '../../src/core/file-reader.js'
import {fixtureCorePath} from '../helpers/fixture-core.js'

// The read cache cuts its 64 KiB blocks from one slab and reuses an evicted block's place for the
// next one (the file's last block is shorter than the others). With a cache of 20 blocks over a
// whole core, every small read must give the file's bytes, through evictions, the short last block
// taking a full block's place and back, and a dropped cache.
// Likewise with blocks of 16 KiB, as the naming worker reads (naming-worker.ts).
it.each([65536, 16384])('small reads through an evicting cache of %i-byte blocks cut from a slab give the file bytes', async blockSize => {
  const core = await fixtureCorePath('v2.10-shared')
  const bytes = fs.readFileSync(core)
  const blocks = Math.ceil(bytes.length / blockSize)
  expect(blocks, 'more blocks than the cache holds').toBeGreaterThan(40)
  expect(bytes.length % blockSize, 'a short last block').not.toBe(0)
  const reader = new FileReader(core, undefined, 20, blockSize)
  let seed = 7
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  // A peek (peekInto) gives the same bytes, from a cached block or read alone.
  const peeked = (offset: number, length: number) => {
    const got = Buffer.alloc(length)
    reader.peekInto(offset, length, got)
    return got.equals(bytes.subarray(offset, offset + length))
  }
  const check = (offset: number, length: number) => {
    const got = Buffer.alloc(length)
    expect(peeked(offset, length), `${length} bytes at ${offset}, peeked before`).toBe(true)
    reader.readInto(offset, length, got)
    expect(got.equals(bytes.subarray(offset, offset + length)), `${length} bytes at ${offset}`).toBe(true)
    expect(peeked(offset, length), `${length} bytes at ${offset}, peeked after`).toBe(true)
    const word = reader.word(offset)
    if (word !== undefined && offset + 8 <= bytes.length) expect(word).toBe(bytes.readUInt32LE(offset) + bytes.readUInt32LE(offset + 4) * 2 ** 32)
  }
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 3000; i++) {
      // Every few reads one in the last block, so that it is cached, evicted and cached again.
      const length = 1 + Math.floor(rnd() * 300)
      const offset = i % 7 === 0 ? bytes.length - length - Math.floor(rnd() * 1000) : Math.floor(rnd() * (bytes.length - length))
      check(Math.max(0, offset), length)
    }
    reader.dropCache()
  }
  reader.close()
})
