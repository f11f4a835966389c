import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// The naming tiers run on a worker thread of their own beside the graph phases; the object scan
// runs on the main thread and the other workers over ranges of spans, the reverse edges on them
// over ranges of targets, and the dominator pass on a worker beside the main thread's phases
// (issues 10 and 33: every core); the index they write must be the one a single thread writes,
// byte for byte.
const chosen = fixtureIndex().filter(f => ['v2.10-shared', 'v2.16-minimal', 'v2.18.1-shared'].includes(f.id))

describe.each(chosen.map(f => [f.id, f] as const))('analyze on %s', (id, entry) => {
  it('--workers 2 and 3 (the names, the scan, the reverse edges and the dominators on worker threads) and --workers 1 write byte-identical indexes', async () => {
    const work = testTemp(`toma-workers-${id}-`)
    const core = await fixtureCorePath(id)
    const f = fixtureFlags(entry)
    const flags = ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
    const runs: Record<string, {threads: number; scanThreads: number; reverseThreads: number; namingOnWorker: boolean; dominatorsOnWorker: boolean; bytes: Buffer}> = {}
    for (const workers of ['1', '2', '3']) {
      const index = path.join(work, `w${workers}.toma-index`)
      const r = await runToma(['analyze', core, ...flags, '--index', index, '--workers', workers, '--json'], {cwd: work})
      expect(r.status, r.stderr).toBe(0)
      const out = JSON.parse(r.stdout)
      runs[workers] = {threads: out.threads, scanThreads: out.scanThreads, reverseThreads: out.reverseThreads, namingOnWorker: out.namingOnWorker, dominatorsOnWorker: out.dominatorsOnWorker, bytes: fs.readFileSync(index)}
    }
    // Each threaded run really ran on the threads it was given, and no more: with two, the names
    // on one and the graph phases on the other, the dominator pass on a worker once this thread
    // only waits; with three, the scan and the reverse edges on two.
    const shape = (w: string) => [runs[w]!.threads, runs[w]!.scanThreads, runs[w]!.reverseThreads, runs[w]!.namingOnWorker, runs[w]!.dominatorsOnWorker]
    expect(shape('1')).toEqual([1, 1, 1, false, false])
    expect(shape('2')).toEqual([2, 1, 1, true, true])
    expect(shape('3')).toEqual([3, 2, 2, true, true])
    for (const w of ['2', '3']) {
      expect(runs[w]!.bytes.length).toBe(runs['1']!.bytes.length)
      expect(runs[w]!.bytes.equals(runs['1']!.bytes)).toBe(true)
    }
  })
})
