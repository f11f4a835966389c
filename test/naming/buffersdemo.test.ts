import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HeapIndex} from '../../src/index/heap-index.js'
import {analyzeReleaseBuild} from '../helpers/release-build.js'
import {testTemp} from '../helpers/test-temp.js'
import {expectTier, type TruthBlock} from './namesdemo.js'

// Issue 52, item 5: raw `new char[N]` buffers of binary bytes (896 B, 4 KiB), each held from a
// struct whose next words are counts a {pointer, length, capacity} test takes for a std::string's
// (fixtures/buffersdemo), beside real std::strings. Before the string test read the text, the
// std-layout tier named six of them `std::string buffer`. Every expected value is what the process
// recorded about its own blocks (truth.json).

const DIR = fileURLToPath(new URL('../../fixtures/buffersdemo', import.meta.url))
const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as {blocks: TruthBlock[]}
const addr = (s: string) => Number(BigInt(s))

/**
 * The release build alone (the stripped file copied into a folder of its own: its debuglink finds
 * no debug file), or with its debug file beside it (the -g build: one compile, one build-id).
 */
function useBuffersdemo(withDebugFile: boolean): () => HeapIndex {
  let work = ''
  let index: HeapIndex | undefined
  beforeAll(async () => {
    work = testTemp('toma-buffers-')
    index = HeapIndex.open(await analyzeReleaseBuild(DIR, 'buffersdemo', work, withDebugFile))!
  }, 120_000)
  afterAll(() => {
    index?.file.close()
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })
  return () => index!
}

const nameAt = (index: HeapIndex, b: TruthBlock) => {
  const o = index.objectAt(addr(b.address))!
  expect(o.start, `${b.container} starts a slot`).toBe(addr(b.address))
  return {name: index.type(o.index), via: index.via(o.index)}
}

describe('buffersdemo, the release build (no DWARF, no symbols)', () => {
  const index = useBuffersdemo(false)

  it('the truth holds the raw buffers of 896 B and 4 KiB and the real strings it is about', () => {
    const raw = truth.blocks.filter(b => b.kind === 'raw buffer')
    expect(raw.map(b => b.request).sort((a, b) => a - b)).toEqual([896, 896, 896, 896, 4096, 4096, 4096, 4096, 4096])
    expect(truth.blocks.filter(b => b.kind === 'std::string buffer').length).toBe(3)
  })

  it('names no raw buffer, and nothing else the program made but its strings (no tier: none has a type a proof reaches)', () => {
    const wrong = truth.blocks.filter(b => b.kind !== 'std::string buffer' && b.kind !== 'C string')
      .flatMap(b => {
        const got = nameAt(index(), b)
        return got.name === null ? [] : [`${b.container} (${b.kind}) named ${got.name} by ${got.via}`]
      })
    expect(wrong).toEqual([])
  })

  it('names every text std::string buffer and C string, and nothing the truth does not list (precision 100 %)', () => {
    const counts = expectTier(index(), ['std::string buffer', 'C string'], ['layout', 'content'], truth)
    expect(counts['std::string buffer']).toBe(3)
    expect(counts['C string']).toBe(truth.blocks.filter(b => b.kind === 'C string').length)
    expect(index().meta.naming.conflicts.count).toBe(0)
  })

  it('leaves the std::string of binary bytes unnamed: without its type, its bytes are a raw buffer\'s', () => {
    const [binary] = truth.blocks.filter(b => b.kind === 'binary std::string buffer')
    expect(nameAt(index(), binary!).name).toBeNull()
  })
})

// Issue 52, item 4: with the DWARF, pointers to scalars name the blocks they start: a byte type's
// (`char*`, `unsigned char*`, `int8_t*`, `std::byte*`) by its own type, `char[]`; another's (`long*`,
// a struct's) as `T` or `T[n]` where the block's size class leaves one count; a `void*`, a pointer
// into a block's middle and an array whose count the block does not prove name nothing.
describe('buffersdemo, the -g build (the same file with its debug file)', () => {
  const index = useBuffersdemo(true)
  const NAMED = ['raw buffer', 'object', 'std::string buffer', 'binary std::string buffer', 'C string']

  it('names every block the process made by what it is, and nothing the truth does not list (recall and precision 100 %)', () => {
    const counts = expectTier(index(), NAMED, ['debug-info', 'layout', 'content'], truth)
    for (const k of NAMED) expect(counts[k], k).toBe(truth.blocks.filter(b => b.kind === k).length)
    expect(counts['raw buffer']).toBe(9)
    expect(index().meta.naming.conflicts.count).toBe(0)
  })

  it('each raw buffer by its pointer\'s own element type, from the DWARF', () => {
    const got = truth.blocks.filter(b => b.kind === 'raw buffer').map(b => `${b.container}: ${nameAt(index(), b).name} by ${nameAt(index(), b).via}`)
    expect(got).toEqual(truth.blocks.filter(b => b.kind === 'raw buffer').map(b => `${b.container}: ${b.name} by debug-info`))
    expect(new Set(truth.blocks.filter(b => b.kind === 'raw buffer').map(b => b.name))).toEqual(new Set(['char[]', 'unsigned char[]', 'signed char[]', 'std::byte[]']))
  })

  it('a long by its long*, six Samples by their Sample* (only 6 × 40 B fits the 240-byte class)', () => {
    for (const name of ['long', 'Sample[6]']) {
      const b = truth.blocks.find(t => t.name === name)!
      expect(nameAt(index(), b)).toEqual({name, via: 'debug-info'})
    }
  })

  it('names nothing through a void*, a pointer into a block\'s middle, or a double* whose count the block does not prove', () => {
    for (const kind of ['void* target', 'interior target', 'unproven array']) {
      const [b] = truth.blocks.filter(t => t.kind === kind)
      expect(nameAt(index(), b!).name, kind).toBeNull()
    }
  })
})
