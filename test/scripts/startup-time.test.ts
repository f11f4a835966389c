import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {medianRunMs, startupTimes} from '../../tools/bench/startup-time.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// The start-up measurement that `npm run bench` prints and appends to BENCHMARKS.md (issue 13),
// run alone here on a fixture core: not the whole bench.
describe('start-up measurement', () => {
  let work: string
  let core: string
  let address: string
  beforeAll(async () => {
    const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
    work = testTemp('toma-startup-')
    core = path.join(work, 'core')
    fs.copyFileSync(await fixtureCorePath(entry.id), core)
    const f = fixtureFlags(entry)
    const a = await runToma(['analyze', core, '--exe', f.exe, '--tcmalloc', f.tcmalloc!, '--json'], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
    const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8')) as Truth
    address = truth.objects[0]!.address
  })
  afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

  it('is the median wall time of whole runs, and a failing run is an error, not a figure', () => {
    // Three runs that each sleep 300 ms: the median cannot be less.
    expect(medianRunMs(['-e', 'setTimeout(() => {}, 300)'], 3)).toBeGreaterThanOrEqual(300)
    expect(() => medianRunMs(['-e', 'process.exit(3)'], 1)).toThrow(/exited 3/)
  })

  it('measures bare Node, toma --version and a find-object answered from the index', () => {
    const t = startupTimes(core, address, 3)
    expect(t.runs).toBe(3)
    for (const ms of [t.nodeMs, t.versionMs, t.findObjectMs]) expect(ms).toBeGreaterThan(0)
    // CPU time (Linux's /proc): a toma call costs more than bare Node's start.
    expect(t.findObjectCpuMs).toBeGreaterThan(t.nodeCpuMs!)
  })

  it('refuses to time a query that had to analyse the core first', () => {
    const fresh = path.join(work, 'fresh-core')
    fs.copyFileSync(core, fresh)
    expect(() => startupTimes(fresh, address, 1)).toThrow(/printed on stderr: toma: no index for/)
  })
})
