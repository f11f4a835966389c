import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {brotliCorePath, brotliTreePath} from '../helpers/fixture-core.js'
import {ARM64_FIXTURE} from '../helpers/arm64-fixture.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

/**
 * A core of a program nobody here wrote (fixtures/arm64/swipl-9.0.4-threads, made by
 * fixtures/generate-arm64-foreign.sh): Debian 12's arm64 SWI-Prolog 9.0.4, linked with Debian's
 * libtcmalloc_minimal, four threads at work, dumped by QEMU on the SIGQUIT it sent itself. The truth
 * is TCMalloc's own (its counters in the core) and QEMU's (one NT_PRSTATUS a thread): toma must take
 * it as it is, with no refusal and no warning, its model equal to those counters, every thread cache
 * a live thread's, the modules found through link_map, and every query answering.
 */
const DIR = fileURLToPath(new URL('../../fixtures/arm64/swipl-9.0.4-threads', import.meta.url))
const temp = testTemp('toma-arm64-foreign-')
const index = path.join(temp, 'swipl.toma-index')
let flags: string[]

beforeAll(async () => {
  const core = await brotliCorePath(path.join(DIR, 'core.br'))
  // The package's libraries and libtcmalloc_minimal are the fixture's; libc, libstdc++, libm,
  // libgcc_s and ld.so are heapdemo-2.10's (the same files: record.json's sysrootShared).
  const shared = await brotliTreePath(path.join(ARM64_FIXTURE, 'sysroot'))
  const search = [path.join(shared, 'lib/aarch64-linux-gnu'), path.join(shared, 'lib')].join(':')
  flags = [core, '--exe', path.join(DIR, 'swipl'), '--sysroot', await brotliTreePath(path.join(DIR, 'sysroot')), '--solib-search-path', search]
}, 300_000)

afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

it('SWI-Prolog on arm64: analyze exact against TCMalloc\'s own counters, no warning, every thread cache a live thread\'s', async () => {
  const r = await runToma(['analyze', ...flags, '--index', index, '--json'])
  expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''})
  const a = JSON.parse(r.stdout)
  expect(a.warnings.total).toBe(0)
  expect(a.graph.warnings).toBe(0)
  expect(a.crossCheck.length).toBeGreaterThanOrEqual(7)
  for (const c of a.crossCheck) expect({property: c.property, equal: c.equal, independent: c.independent}).toEqual({property: c.property, equal: true, independent: true})
  expect(a.allocator.version).toBe('2.10')
  // Four threads (main and three workers) and five caches: the main thread's first one (gperftools 2.10
  // keeps it, as in heapdemo-2.10) and one each.
  const info = await runToma(['info', ...flags, '--json'])
  expect({status: info.status, stderr: info.stderr}).toEqual({status: 0, stderr: ''})
  const i = JSON.parse(info.stdout)
  const tids = i.threads.map((t: {tid: number}) => t.tid)
  expect(tids).toHaveLength(4)
  expect(a.threadCaches).toHaveLength(5)
  for (const c of a.threadCaches) expect(tids).toContain(c.tid)
  // Every module link_map names, each with its file: swipl (a PIE at QEMU's 0x5500000000) and ten libraries.
  expect(i.modulesFrom).toBe('link_map (no NT_FILE): r_debug through swipl\'s DT_DEBUG, load bias 0x5500000000')
  expect(i.modules.map((m: {path: string}) => path.basename(m.path)).sort()).toEqual([
    'ld-linux-aarch64.so.1', 'libc.so.6', 'libgcc_s.so.1', 'libgmp.so.10', 'libm.so.6', 'libstdc++.so.6', 'libswipl.so.9', 'libtcmalloc_minimal.so.4', 'libtinfo.so.6', 'libz.so.1', 'swipl',
  ])
  for (const m of i.modules) expect({module: m.path, found: m.found}).toEqual({module: m.path, found: true})
  // QEMU records the signal in the one thread that took it (the kernel gave the process's SIGQUIT to a worker).
  expect(i.threads.filter((t: {signal: number}) => t.signal === 3)).toHaveLength(1)
}, 300_000)

it('SWI-Prolog on arm64: leaks and damage answer from the index', async () => {
  const leaks = await runToma(['leaks', index, '--json'])
  expect({status: leaks.status, stderr: leaks.stderr}).toEqual({status: 0, stderr: ''})
  const damage = await runToma(['damage', index, '--json'])
  expect({status: damage.status, stderr: damage.stderr}).toEqual({status: 0, stderr: ''})
  // No list of TCMalloc's is damaged in a healthy program's core.
  expect(JSON.parse(damage.stdout).findings).toEqual([])
}, 300_000)
