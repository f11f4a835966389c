import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// The object scan runs on the main thread and a worker thread over ranges of spans, the reverse
// edges on both over ranges of targets, and the dominator pass on a worker beside the main
// thread's phases (issue 10: both cores); the index they write must be the one a single thread
// writes, byte for byte.
const chosen = fixtureIndex().filter(f => ['v2.10-shared', 'v2.16-minimal', 'v2.18.1-shared'].includes(f.id))

describe.each(chosen.map(f => [f.id, f] as const))('analyze on %s', (id, entry) => {
  it('--workers 2 (worker threads for the scan, the reverse edges and the dominators) and --workers 1 write byte-identical indexes', async () => {
    const work = testTemp(`toma-workers-${id}-`)
    const core = await fixtureCorePath(id)
    const f = fixtureFlags(entry)
    const flags = ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
    const runs: Record<string, {threads: number; scanThreads: number; reverseThreads: number; bytes: Buffer}> = {}
    for (const workers of ['1', '2']) {
      const index = path.join(work, `w${workers}.toma-index`)
      const r = await runToma(['analyze', core, ...flags, '--index', index, '--workers', workers, '--json'], {cwd: work})
      expect(r.status, r.stderr).toBe(0)
      const out = JSON.parse(r.stdout)
      runs[workers] = {threads: out.threads, scanThreads: out.scanThreads, reverseThreads: out.reverseThreads, bytes: fs.readFileSync(index)}
    }
    // The parallel run really ran the scan, the reverse edges and the dominator pass on a second thread.
    expect(runs['1']!.threads).toBe(1)
    expect(runs['1']!.scanThreads).toBe(1)
    expect(runs['1']!.reverseThreads).toBe(1)
    expect(runs['2']!.threads).toBe(2)
    expect(runs['2']!.scanThreads).toBe(2)
    expect(runs['2']!.reverseThreads).toBe(2)
    expect(runs['2']!.bytes.length).toBe(runs['1']!.bytes.length)
    expect(runs['2']!.bytes.equals(runs['1']!.bytes)).toBe(true)
  })
})
