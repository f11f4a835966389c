import {spawnSync} from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {decompressFile, ZSTD_DECODERS, zstdDecoder, type ZstdDecoderName} from '../../src/input/decompress.js'
import {zstdTool} from '../../src/input/zstd-tool.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 29: zstd is decoded by Node's zlib when it has zstd, else by the system's `zstd`, else by
// fzstd (TOMA_ZSTD_DECODER picks one). Each is run here on fixture v2.10-shared's core as the real
// zstd tool compressed it (fixtures/compressed), against the raw core the process dumped.
const ZST = fileURLToPath(new URL('../../fixtures/compressed/v2.10-shared.core.zst', import.meta.url))
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const available: Record<ZstdDecoderName, boolean> = {
  'node-zlib': typeof (zlib as unknown as {createZstdDecompress?: unknown}).createZstdDecompress === 'function',
  'zstd-tool': zstdTool() !== null,
  fzstd: true,
}

let root: string
let truth: string
beforeAll(async () => {
  root = testTemp('toma-zstd-')
  truth = crypto.createHash('sha256').update(fs.readFileSync(await fixtureCorePath(entry.id))).digest('hex')
})
afterAll(() => fs.rmSync(root, {recursive: true, force: true}))

/** Runs `decompressFile` with TOMA_ZSTD_DECODER set, hashing what comes out; `stopAfter` bytes, the sink throws. */
async function decode(decoder: ZstdDecoderName, file: string, stopAfter = Infinity): Promise<{bytes: number; sha256: string}> {
  const before = process.env.TOMA_ZSTD_DECODER
  process.env.TOMA_ZSTD_DECODER = decoder
  try {
    const hash = crypto.createHash('sha256')
    let bytes = 0
    await decompressFile(file, 'zstd', chunk => {
      bytes += chunk.length
      if (bytes > stopAfter) throw new Error('the consumer stopped')
      hash.update(chunk)
    })
    return {bytes, sha256: hash.digest('hex')}
  } finally {
    if (before === undefined) delete process.env.TOMA_ZSTD_DECODER
    else process.env.TOMA_ZSTD_DECODER = before
  }
}

/** The `zstd` processes this test process has as children now (Linux: /proc/PID/task/TID/children). */
function zstdChildren(): string[] {
  const tasks = `/proc/${process.pid}/task`
  return fs
    .readdirSync(tasks)
    .flatMap(tid => fs.readFileSync(path.join(tasks, tid, 'children'), 'utf8').split(' ').filter(Boolean))
    .filter(pid => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'zstd'
      } catch {
        return false
      }
    })
}

function writeVariant(name: string, bytes: Buffer): string {
  const file = path.join(root, name)
  fs.writeFileSync(file, bytes)
  return file
}

it('the tests know every decoder, and this machine has the system zstd the figures were measured with', () => {
  expect(Object.keys(available).sort()).toEqual([...ZSTD_DECODERS].sort())
  expect(available['zstd-tool']).toBe(true)
})

describe.each(ZSTD_DECODERS)('the %s decoder', decoder => {
  it.skipIf(!available[decoder])('gives the dumped core byte for byte', async () => {
    expect(await decode(decoder, ZST)).toEqual({bytes: entry.coreBytes, sha256: truth})
  })

  it.skipIf(!available[decoder])('decodes every frame of a stream of several (the file twice and an empty skippable frame: the core twice)', async () => {
    const whole = fs.readFileSync(ZST)
    const skippable = Buffer.alloc(8)
    skippable.writeUInt32LE(0x184d2a50, 0)
    const twice = writeVariant(`${decoder}-twice.zst`, Buffer.concat([whole, skippable, whole]))
    const core = fs.readFileSync(await fixtureCorePath(entry.id))
    expect(await decode(decoder, twice)).toEqual({bytes: 2 * entry.coreBytes, sha256: crypto.createHash('sha256').update(core).update(core).digest('hex')})
  })

  it.skipIf(!available[decoder])('rejects a cut stream and a damaged one', async () => {
    const whole = fs.readFileSync(ZST)
    const cut = writeVariant(`${decoder}-cut.zst`, whole.subarray(0, whole.length >> 1))
    await expect(decode(decoder, cut)).rejects.toThrow()
    // Ten bytes zeroed inside the first block: the real zstd tool reports "Data corruption detected".
    const damaged = writeVariant(`${decoder}-damaged.zst`, Buffer.from(whole).fill(0, 50_000, 50_010))
    if (decoder !== 'fzstd') await expect(decode(decoder, damaged)).rejects.toThrow()
    // fzstd does not check the frame's checksum: it passes such damage on as a core of the right
    // size with other bytes (one reason libzstd is preferred; the core's own checks then apply).
    else expect((await decode(decoder, damaged)).sha256).not.toBe(truth)
  })

  it.skipIf(!available[decoder])('stops when its consumer stops, leaving no decoder process behind', async () => {
    await expect(decode(decoder, ZST, 3 << 20)).rejects.toThrow('the consumer stopped')
    expect(zstdChildren()).toEqual([])
  })

  it.skipIf(!available[decoder])('through the command, a cut core is one line, exit 2 and no copy left', async () => {
    const dir = path.join(root, `${decoder}-cli`)
    fs.mkdirSync(dir)
    const whole = fs.readFileSync(ZST)
    const cut = path.join(dir, 'core.zst')
    fs.writeFileSync(cut, whole.subarray(0, whole.length >> 1))
    const f = fixtureFlags(entry)
    const r = await runToma(['analyze', cut, '--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])], {cwd: dir, env: {TOMA_ZSTD_DECODER: decoder}})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^toma: .*core\.zst: zstd data cut short, damaged or not a core \(.+\)\n$/)
    expect(fs.readdirSync(path.join(dir, '.toma', 'cores'))).toEqual([])
    expect(fs.existsSync(cut + '.toma-index')).toBe(false)
  })
})

it.skipIf(!available['zstd-tool'])('the system zstd refuses a frame that asks for a 2 GiB window: its memory stays bounded', async () => {
  // The real tool, compressing from a pipe (size unknown) with --long=31, writes a 2 GiB window in the frame header.
  const start = fs.readFileSync(await fixtureCorePath(entry.id)).subarray(0, 1 << 20)
  const made = spawnSync(zstdTool()!, ['-q', '--long=31', '-c'], {input: start})
  expect(made.status).toBe(0)
  const file = writeVariant('long31.zst', made.stdout)
  await expect(decode('zstd-tool', file)).rejects.toThrow(/^Decoding error \(36\) : Frame requires too much memory for decoding; .*2147483648 > 134217728/)
  expect(zstdChildren()).toEqual([])
})

it('unasked, the fastest at hand is taken, and fzstd when there is no other', () => {
  expect(process.env.TOMA_ZSTD_DECODER).toBeUndefined()
  expect(zstdDecoder().kind).toBe(available['node-zlib'] ? 'node-zlib' : 'zstd-tool')
  const before = process.env.PATH
  process.env.PATH = ''
  try {
    expect(zstdDecoder().kind).toBe(available['node-zlib'] ? 'node-zlib' : 'fzstd')
  } finally {
    process.env.PATH = before
  }
})

it('a decoder the environment names but this machine lacks is an error, not a silent other one', async () => {
  const missing = ZSTD_DECODERS.find(d => !available[d])
  const before = process.env.PATH
  // With no PATH there is no system zstd to find; without zstd in Node's zlib, node-zlib is missing too.
  process.env.PATH = ''
  try {
    await expect(decode('zstd-tool', ZST)).rejects.toThrow('TOMA_ZSTD_DECODER=zstd-tool: not available here')
    if (missing === 'node-zlib') await expect(decode('node-zlib', ZST)).rejects.toThrow('TOMA_ZSTD_DECODER=node-zlib: not available here')
  } finally {
    process.env.PATH = before
  }
})
