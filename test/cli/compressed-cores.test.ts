import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {indexLayout} from '../helpers/index-layout.js'

// Issue 13: cores as systemd-coredump and users compress them. The compressed files are
// fixture v2.10-shared's core put through the real zstd, xz, lz4 and gzip tools
// (fixtures/generate-compressed.sh); each must analyse to the same index as the raw core.
const COMPRESSED = fileURLToPath(new URL('../../fixtures/compressed', import.meta.url))
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const flags = () => {
  const f = fixtureFlags(entry)
  return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
}
const FORMATS = [
  ['zstd', 'zst'],
  ['xz', 'xz'],
  ['lz4', 'lz4'],
  ['gzip', 'gz'],
] as const

/**
 * An index file's header (meta and array table) and its array bytes, by the layout IndexWriter
 * writes: a 24-byte preamble (magic, format version, header length, header offset as two u32),
 * the arrays, then the JSON header at its offset.
 */
function readIndex(file: string) {
  const {header, data} = indexLayout(fs.readFileSync(file))
  return {header, data}
}

let root: string
let raw: ReturnType<typeof readIndex>

beforeAll(async () => {
  root = testTemp('toma-compressed-')
  const dir = path.join(root, 'raw')
  fs.mkdirSync(dir)
  const core = path.join(dir, 'core')
  fs.copyFileSync(await fixtureCorePath(entry.id), core)
  const r = await runToma(['analyze', core, ...flags(), '--json'], {cwd: dir})
  expect(r.status, r.stderr).toBe(0)
  raw = readIndex(core + '.toma-index')
})
afterAll(() => fs.rmSync(root, {recursive: true, force: true}))

describe.each(FORMATS)('a %s-compressed core', (format, suffix) => {
  let dir: string
  let file: string
  beforeAll(() => {
    dir = path.join(root, format)
    fs.mkdirSync(dir)
    // Named without its suffix: the format is known by its magic bytes.
    file = path.join(dir, 'core.1234')
    fs.copyFileSync(path.join(COMPRESSED, `${entry.id}.core.${suffix}`), file)
  })

  it('analyses to the same index as the raw core, recording the compressed file it came from', async () => {
    const r = await runToma(['analyze', file, ...flags(), '--json'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).core.path).toBe(file)
    const got = readIndex(file + '.toma-index')
    expect(Buffer.compare(got.data, raw.data)).toBe(0)
    expect(got.header.arrays).toEqual(raw.header.arrays)
    const {inputs, summary, ...rest} = got.header.meta
    const {inputs: rawInputs, summary: rawSummary, ...rawRest} = raw.header.meta
    expect(rest).toEqual(rawRest)
    expect({...summary, core: {...summary.core, path: null}}).toEqual({...rawSummary, core: {...rawSummary.core, path: null}})
    expect(inputs.modules).toEqual(rawInputs.modules)
    const stat = fs.statSync(file)
    expect(inputs.core).toMatchObject({path: file, size: stat.size, mtimeMs: stat.mtimeMs, compressed: {format}})
    // The decompressed copy is in the cache folder beside the core, complete and sparse.
    const copy = inputs.core.compressed.uncompressedPath as string
    expect(path.dirname(copy)).toBe(path.join(dir, '.toma', 'cores'))
    expect(fs.statSync(copy).size).toBe(entry.coreBytes)
    expect(fs.statSync(copy).blocks * 512).toBeLessThan(entry.coreBytes)
  })

  it('a query reuses the index and the decompressed copy', async () => {
    const copy = readIndex(file + '.toma-index').header.meta.inputs.core.compressed.uncompressedPath as string
    const before = fs.statSync(copy).mtimeMs
    const r = await runToma(['classes', file, '--json'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
    expect(fs.statSync(copy).mtimeMs).toBe(before)
    expect(fs.readdirSync(path.dirname(copy)).sort()).toEqual([path.basename(copy), path.basename(copy) + '.identity'])
  })

  it('info, threads and --json name the file given, not its decompressed copy', async () => {
    const text = await runToma(['info', file], {cwd: dir})
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout.split('\n')[0]).toBe(`core ${file}  ${format}, ${entry.coreBytes.toLocaleString('en-US')} bytes decompressed`)
    const json = await runToma(['info', file, '--json'], {cwd: dir})
    const data = JSON.parse(json.stdout)
    expect(data.core).toBe(file)
    expect(data.compressed.format).toBe(format)
    for (const args of [['threads', file], ['threads', file, '--json'], ['classes', file, '--json']]) {
      const r = await runToma(args, {cwd: dir})
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).not.toContain(path.join('.toma', 'cores'))
    }
    expect(text.stdout).not.toContain(path.join('.toma', 'cores'))
  })

  it('cut short, it gives one clear line and a non-zero exit, and leaves no copy behind', async () => {
    const cutDir = path.join(root, `${format}-cut`)
    fs.mkdirSync(cutDir)
    const cut = path.join(cutDir, `core.${suffix}`)
    const whole = fs.readFileSync(path.join(COMPRESSED, `${entry.id}.core.${suffix}`))
    fs.writeFileSync(cut, whole.subarray(0, whole.length >> 1))
    const r = await runToma(['analyze', cut, ...flags()], {cwd: cutDir})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^toma: .*core\\.${suffix}: ${format} data cut short, damaged or not a core \\(.+\\)\\n$`))
    expect(fs.readdirSync(path.join(cutDir, '.toma', 'cores'))).toEqual([])
    expect(fs.existsSync(cut + '.toma-index')).toBe(false)
  })
})

describe('a compressed file that holds no core', () => {
  it('is one line naming the file given', async () => {
    const dir = path.join(root, 'not-a-core')
    fs.mkdirSync(dir)
    const file = path.join(dir, 'notes.gz')
    // A complete gzip stream (Node's zlib) of a short text: it decompresses, but to no core.
    const zlib = await import('node:zlib')
    fs.writeFileSync(file, zlib.gzipSync('not a core\n'))
    const r = await runToma(['info', file], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`toma: ${file} (decompressed): not an ELF file (11 bytes, too short for an ELF header)\n`)
  })
})
