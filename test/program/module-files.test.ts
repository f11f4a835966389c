import fs from 'node:fs'
import path from 'node:path'
import {expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {FIXTURES, fixtureCorePath, fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// 2.16 was run from a Debian trixie sysroot: its core names files under that sysroot's path.
const entry = fixtureIndex().find(f => f.id === 'v2.16-shared')!

function libtcmallocPath(core: Core): string {
  return core.modules.find(m => /libtcmalloc/.test(path.basename(m.path)))!.path
}

it('finds module files under --sysroot by the path the core names, and checks their build-ids', async () => {
  const core = Core.open(await fixtureCorePath(entry.id))
  const named = libtcmallocPath(core)
  const sysroot = testTemp('toma-sysroot-')
  fs.mkdirSync(path.join(sysroot, path.dirname(named)), {recursive: true})
  fs.copyFileSync(path.join(FIXTURES, entry.id, entry.tcmalloc!), path.join(sysroot, named))
  const program = Program.load(core, {sysroot})
  const lib = program.modules.find(m => m.module.path === named)!
  expect(lib.how).toBe('sysroot')
  expect(lib.verified).toBe(true)
  const heap = analyzeHeap(program)
  expect(heap.globals.versionHow).toMatch(/gperftools 2\.16/)
  core.close()
})

it('finds module files along --solib-search-path by file name', async () => {
  const core = Core.open(await fixtureCorePath(entry.id))
  const named = libtcmallocPath(core)
  const dir = testTemp('toma-solib-')
  fs.copyFileSync(path.join(FIXTURES, entry.id, entry.tcmalloc!), path.join(dir, path.basename(named)))
  const r = await runToma(['info', await fixtureCorePath(entry.id), '--solib-search-path', `/nonexistent:${dir}`, '--json'])
  expect(r.status, r.stderr).toBe(0)
  const mod = JSON.parse(r.stdout).modules.find((m: {path: string}) => m.path === named)
  expect(mod.how).toBe('solib-search-path')
  expect(mod.verified).toBe(true)
  core.close()
})

it('models the heap from the core alone, with no module file at all (version from the core\'s build-id or file name)', async () => {
  for (const [id, how] of [['v2.10-shared', /^build-id 560cd227\S* in the core \(Debian 2\.10-1/], ['v2.18.1-minimal', /^file name libtcmalloc_minimal\.so\.4\.6\.5 in the core's list/]] as const) {
    const {program, truth} = await openFixture(id)
    for (const m of program.modules) m.file = null
    const heap = analyzeHeap(program)
    expect(heap.globals.versionHow).toMatch(how)
    expect(heap.globals.version).toBe(truth.gperftools)
    for (const property of ['generic.current_allocated_bytes', 'tcmalloc.thread_cache_free_bytes', 'tcmalloc.central_cache_free_bytes']) {
      expect(heap.crossCheck.find(c => c.property === property)!.toma).toBe(truth.counters[property])
    }
    program.core.close()
  }
})

it('--tcmalloc-version overrides detection, and an unknown version is one clear error', async () => {
  const core = await fixtureCorePath('v2.10-shared')
  const tmp = testTemp('toma-ver-')
  const ok = await runToma(['analyze', core, '--tcmalloc-version', '2.10', '--index', path.join(tmp, 'a.idx'), '--json'])
  expect(ok.status, ok.stderr).toBe(0)
  expect(JSON.parse(ok.stdout).allocator.versionHow).toBe('--tcmalloc-version')
  const bad = await runToma(['analyze', core, '--tcmalloc-version', '9.9', '--index', path.join(tmp, 'b.idx')])
  expect(bad.status).not.toBe(0)
  expect(bad.stderr.trim().split('\n')).toHaveLength(1)
  expect(bad.stderr).toMatch(/9\.9: not a gperftools version/)
})

it('finds TCMalloc inside a statically linked executable with no file at hand (no symbols at all)', async () => {
  const {program, truth} = await openFixture('v2.10-static')
  for (const m of program.modules) m.file = null
  const heap = analyzeHeap(program)
  expect(heap.module.loaded).toBe(program.executable)
  expect(heap.globals.how.pageHeap).toMatch(/^signature/)
  expect(heap.globals.how.threadHeaps).toMatch(/^signature/)
  expect(heap.crossCheck.find(c => c.property === 'generic.current_allocated_bytes')!.toma).toBe(truth.counters['generic.current_allocated_bytes'])
  program.core.close()
})
