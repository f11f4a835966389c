import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {analyzeCore} from '../../src/pipeline/analyze-core.js'
import {uncompressedCore} from '../../src/input/uncompressed-core.js'
import {workerScript} from '../../src/util/worker-job.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'
import {analyzeNamesdemo} from '../naming/namesdemo.js'

// Every worker job runs here in this process, from the sources: its worker script is the compiled
// one (worker-job.ts; npm test builds it first), and a job whose script cannot run fails the test
// instead of falling back to this thread. Each threaded path must give what one thread gives.
const work = testTemp('toma-worker-paths-')
afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

describe('worker scripts', () => {
  it('resolve from the sources to the compiled files', () => {
    for (const script of ['../../src/graph/scan-worker.js', '../../src/naming/naming-worker.js', '../../src/graph/reverse-worker.js', '../../src/dominators/dominator-worker.js', '../../src/index/background-write-worker.js', '../../src/input/decompress-worker.js']) {
      const file = fileURLToPath(workerScript(new URL(script, import.meta.url)))
      expect(file).toMatch(/\/dist\/src\/.*-worker\.js$/)
      expect(fs.existsSync(file)).toBe(true)
    }
  })

  it('missing: an error, not a silent fall back to one thread', () => {
    expect(() => workerScript(new URL('../../src/graph/no-such-worker.js', import.meta.url))).toThrow(/not found/)
  })
})

describe.each(fixtureIndex().filter(f => ['v2.10-shared', 'v2.18.1-shared'].includes(f.id)).map(f => [f.id, f] as const))('analysis on %s', (id, entry) => {
  it('on worker threads (naming tiers, object scan, reverse edges, dominator pass, index writes) writes the index one thread writes, byte for byte', async () => {
    const core = await fixtureCorePath(id)
    const one = path.join(work, `${id}-1.toma-index`)
    const two = path.join(work, `${id}-2.toma-index`)
    const single = analyzeCore(core, fixtureFlags(entry), undefined, one, undefined, {workers: 1})
    const threaded = analyzeCore(core, fixtureFlags(entry), undefined, two, undefined, {workers: 3})
    expect([single.threadsUsed, single.scanThreads, single.reverseThreads]).toEqual([1, 1, 1])
    expect([threaded.threadsUsed, threaded.scanThreads, threaded.reverseThreads, threaded.namingOnWorker]).toEqual([3, 2, 2, true])
    expect(fs.readFileSync(two).equals(fs.readFileSync(one))).toBe(true)
  })
})

describe('naming on namesdemo, the -g build (every tier but the runtimes names some of its blocks)', () => {
  it('on its worker thread names every slot as one thread does: the same index, byte for byte', async () => {
    const runs = [await analyzeNamesdemo('symbols', {workers: 1}), await analyzeNamesdemo('symbols', {workers: 2})]
    try {
      const [one, two] = runs.map(r => fs.readFileSync(path.join(r.work, 'core.toma-index')))
      // The worker named by debug information, layouts and content, not by vtables alone.
      const namedBy = runs[1]!.index.meta.naming.namedBy
      for (const via of ['vtable', 'debug-info', 'layout', 'content']) expect(namedBy[via], via).toBeGreaterThan(0)
      expect(two!.equals(one!)).toBe(true)
    } finally {
      for (const r of runs) {
        r.index.file.close()
        fs.rmSync(r.work, {recursive: true, force: true})
      }
    }
  })
})

describe('decompression', () => {
  it('on its worker thread gives the core the process dumped', async () => {
    const gz = path.join(work, 'core.gz')
    fs.copyFileSync(fileURLToPath(new URL('../../fixtures/compressed/v2.10-shared.core.gz', import.meta.url)), gz)
    const copy = uncompressedCore(gz, false)!
    const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex')
    expect(sha(fs.readFileSync(copy.uncompressedPath))).toBe(sha(fs.readFileSync(await fixtureCorePath('v2.10-shared'))))
    expect(sha(fs.readFileSync(copy.uncompressedPath))).toBe(sha(zlib.gunzipSync(fs.readFileSync(gz))))
  })
})
