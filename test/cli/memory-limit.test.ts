import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {parseMemorySize} from '../../src/cli/parse-size.js'
import {defaultMemoryLimit, memoryLimitLine, memorySize} from '../../src/store/memory-limit.js'

// analyze --memory-limit (issue 33): under a limit too small for anything, the reverse edges go
// to the index in passes (to their places in it), the shortest paths and the dominator pass's DFS
// read the forward edges in the index through block caches, and the retained sizes are summed over the child
// lists once idom and the preorder are gone; the index must be the unlimited run's, byte for byte,
// and the run must say that it held more than its limit.
const entry = fixtureIndex().find(f => f.id === 'v2.18.1-shared')

describe.skipIf(!entry)('analyze --memory-limit on v2.18.1-shared', () => {
  it('a limit it cannot keep: the same index as without one, the limit in --json, and one line saying it was passed', async () => {
    const work = testTemp('toma-memory-limit-')
    const core = await fixtureCorePath(entry!.id)
    const f = fixtureFlags(entry!)
    const flags = ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : []), '--json']
    const free = path.join(work, 'free.toma-index')
    const tight = path.join(work, 'tight.toma-index')
    const a = await runToma(['analyze', core, ...flags, '--workers', '1', '--index', free], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
    expect(a.stderr).toBe('')
    const b = await runToma(['analyze', core, ...flags, '--workers', '1', '--index', tight, '--memory-limit', '1M'], {cwd: work})
    expect(b.status, b.stderr).toBe(0)
    const freeRun = JSON.parse(a.stdout).memory
    const tightRun = JSON.parse(b.stdout).memory
    expect(freeRun.limitFrom).toBe('default')
    expect(freeRun.reversePasses).toBe(1)
    expect(freeRun.forwardEdgesInIndex).toBe(false)
    expect(freeRun.scanRangesSpilled).toBe(0)
    expect(freeRun).toMatchObject({scanTargetsInIndex: false, dominatorParentParked: false, typeIdsParked: false})
    // 1M is a mebibyte (as docker and systemd read it), and the run held far more.
    expect(tightRun).toMatchObject({limitBytes: 2 ** 20, limitFrom: 'option'})
    expect(tightRun.reversePasses).toBeGreaterThanOrEqual(1)
    // The shortest paths and the DFS read the forward edges in the index, through block caches.
    expect(tightRun.forwardEdgesInIndex).toBe(true)
    // The object scan's finished ranges waited in a scratch file (edge-spill.ts), read back for the join.
    expect(tightRun.scanRangesSpilled).toBeGreaterThan(0)
    // The join wrote the targets to the index, not memory (outStart first), and they came back
    // after the roots; the dominator pass's parent[] waited in its scratch file through the
    // semidominator loop; the type ids waited in one through the retained sizes and the holder
    // walk, which read them through caches (issue 52: the 30 M-object core's peaks).
    expect(tightRun).toMatchObject({scanTargetsInIndex: true, dominatorParentParked: true, typeIdsParked: true})
    expect(tightRun.peakBytes).toBeGreaterThan(2 ** 20)
    const lines = b.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^toma: held \d+ MiB at most, above its 1 MiB memory limit: /)
    expect(fs.readFileSync(tight).equals(fs.readFileSync(free))).toBe(true)
    // Two threads under a limit that holds no thread beside the main one's phases: the names and
    // the dominator pass stay on the main thread (the scan and the reverse edges may take both),
    // and the index is the same again.
    const two = path.join(work, 'two.toma-index')
    const c = await runToma(['analyze', core, ...flags, '--workers', '2', '--index', two, '--memory-limit', '1K'], {cwd: work})
    expect(c.status, c.stderr).toBe(0)
    const twoRun = JSON.parse(c.stdout)
    expect(twoRun.namingOnWorker).toBe(false)
    expect(twoRun.dominatorsOnWorker).toBe(false)
    expect(twoRun.memory).toMatchObject({limitBytes: 1024, limitFrom: 'option', forwardEdgesInIndex: true})
    // With a worker scanning beside this thread, its ranges spilled too.
    expect(twoRun.memory.scanRangesSpilled).toBeGreaterThan(0)
    expect(twoRun.memory).toMatchObject({scanTargetsInIndex: true, dominatorParentParked: true, typeIdsParked: true})
    expect(fs.readFileSync(two).equals(fs.readFileSync(free))).toBe(true)
    // The dominator pass's and the scan's scratch files went with them.
    expect(fs.readdirSync(work).sort()).toEqual(['free.toma-index', 'tight.toma-index', 'two.toma-index'])
    // A query that finds no index analyses the core itself, under the run flags it was given:
    // the same index again, and the same line when the limit was passed.
    const asked = path.join(work, 'asked.toma-index')
    const q = await runToma(['leaks', core, ...flags, '--workers', '2', '--index', asked, '--memory-limit', '1K'], {cwd: work})
    expect(q.status, q.stderr).toBe(0)
    // (Besides the index's module warnings, which every query repeats: this fixture's sysroot is not here.)
    expect(q.stderr.trim().split('\n').filter(l => !l.startsWith('toma: warning: library '))).toEqual([expect.stringMatching(/^toma: no index for .* yet; analysing it first$/), expect.stringMatching(/^toma: held \d+ MiB at most, above its 1 KiB memory limit: /)])
    expect(fs.readFileSync(asked).equals(fs.readFileSync(free))).toBe(true)
    // With an index to answer from, a bad size is still the answer (on the fast path, without --json).
    const bad = await runToma(['classes', asked, '--memory-limit', '12 parsecs'], {cwd: work})
    expect(bad.status).not.toBe(0)
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^toma: 12 parsecs: not a memory size \(bytes, or with a unit: 512M/)])
  })

  it('a size that is not one: one line, a non-zero exit, no index', async () => {
    const work = testTemp('toma-memory-limit-bad-')
    const core = await fixtureCorePath(entry!.id)
    const index = path.join(work, 'x.toma-index')
    const r = await runToma(['analyze', core, '--index', index, '--memory-limit', 'lots'], {cwd: work})
    expect(r.status).not.toBe(0)
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^toma: lots: not a memory size \(bytes, or with a unit: 512M or 512MiB/)])
    expect(fs.existsSync(index)).toBe(false)
  })
})

describe('memory sizes and the default limit', () => {
  it('a single-letter unit is a power of 1024, a two-letter one as it says', () => {
    expect(parseMemorySize('512M')).toBe(512 * 2 ** 20)
    expect(parseMemorySize('2g')).toBe(2 * 2 ** 30)
    expect(parseMemorySize('1.5 G')).toBe(1.5 * 2 ** 30)
    expect(parseMemorySize('500MB')).toBe(500e6)
    expect(parseMemorySize('64MiB')).toBe(64 * 2 ** 20)
    expect(parseMemorySize('4096')).toBe(4096)
    expect(() => parseMemorySize('-1G')).toThrow(/not a memory size/)
    expect(() => parseMemorySize('12 parsecs')).toThrow(/^12 parsecs: not a memory size \(bytes, or with a unit: 512M/)
  })

  it('the default is three quarters of the memory available, said with both figures', () => {
    const limit = defaultMemoryLimit(16 * 2 ** 30)
    expect(limit).toEqual({bytes: 12 * 2 ** 30, from: 'default', available: 16 * 2 ** 30})
    expect(memoryLimitLine(limit)).toBe('memory limit 12.0 GiB: 75 % of the 16.0 GiB available (--memory-limit sets it)')
    expect(memoryLimitLine({bytes: 512 * 2 ** 20, from: 'option', available: 0})).toBe('memory limit 512 MiB (--memory-limit)')
    // A limit under a mebibyte is said as it is, not as 0 MiB.
    expect([memorySize(900), memorySize(1024), memorySize(1536 * 1024), memorySize(12 * 2 ** 30)]).toEqual(['900 bytes', '1 KiB', '2 MiB', '12.0 GiB'])
  })
})
