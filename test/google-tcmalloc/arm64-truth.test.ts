import fs from 'node:fs'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {analyzeGoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {LIVE, STATE_NAMES} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import {ARM64_FIXTURE} from '../helpers/arm64-fixture.js'
import {brotliTreePath, sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {checkCacheOwners, checkCounters, checkLiveObjects, checkSampled, checkStateBytes, type GoogleTruth} from './truth-checks.js'

// google/tcmalloc fce3f55 (release build, 8 KiB pages) cross-built for aarch64 and run under
// qemu-aarch64-static (fixtures/arm64/README.md): a QEMU-user core, per-thread caches (QEMU user
// mode has no rseq). The same checks against the process's own figures as the x86-64 cores'.
const DIR = `${path.dirname(ARM64_FIXTURE)}/gtc-2026-08-release-perthread-aarch64`

async function open() {
  const core = Core.open(await sparseCorePath(path.join(DIR, 'core.sparse.br')))
  // libc, libstdc++, libm, libgcc_s and ld.so: the same Debian 12 arm64 files heapdemo-2.10 ran with
  const sysroot = await brotliTreePath(path.join(ARM64_FIXTURE, 'sysroot'))
  const program = Program.load(core, {exe: path.join(DIR, 'gtcdemo'), sysroot, debugDirectories: [path.join(DIR, 'debug')]})
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as GoogleTruth
  return {core, program, truth, heap: analyzeGoogleHeap(program)}
}
let opened: ReturnType<typeof open> | undefined
const shared = () => (opened ??= open())
afterAll(async () => (await opened)?.core.close())

describe('google/tcmalloc on aarch64 (QEMU-user core, per-thread caches)', () => {
  it('is an aarch64 core of family 2026-08, a release build, 8 KiB pages, per-thread mode', async () => {
    const {core, heap, truth} = await shared()
    expect(core.arch.name).toBe('aarch64')
    expect(heap.layout.family).toBe('2026-08')
    expect(heap.layout.build).toBe('release')
    expect(heap.pageSize).toBe(2 ** truth.pageShift)
    expect(heap.pageSize).toBe(8192)
    expect(truth.perCpuActive).toBe(false)
    expect(heap.perCpuActive).toBe(false)
  })

  it("reads the layout from the build's DWARF, and it is the table's (x86-64's) for the family", async () => {
    const {program, heap} = await shared()
    expect(program.executable?.debug?.how).toBe('build-id')
    expect(heap.how).toMatch(/^layout from the DWARF of .*\.debug, the same as the table's family 2026-08[ (]/)
  })

  it("counts every state's bytes as the process's own properties do", async () => {
    const {heap, truth} = await shared()
    checkStateBytes(heap, truth)
  })

  it('finds each object the program holds live, at its start, at least its allocated size', async () => {
    const {heap, truth} = await shared()
    checkLiveObjects(heap, truth)
  })

  it('reads every sampled allocation with the size the program asked for', async () => {
    const {heap, truth} = await shared()
    checkSampled(heap, truth)
  })

  it("says which thread's cache holds each cached object, and agrees with tcmalloc's own counters", async () => {
    const {heap, truth} = await shared()
    checkCacheOwners(heap)
    checkCounters(heap, truth)
  })

  it('gives the same heap from the core alone, its globals found by their signatures', async () => {
    const {core, heap} = await shared()
    const bare = Program.load(core, {exe: path.join(DIR, 'gtcdemo')})
    for (const m of bare.modules) m.file = null
    const alone = analyzeGoogleHeap(bare)
    for (const name of ['pageMap', 'sizeMap', 'transferCache', 'pageAllocator'] as const) {
      expect(alone.globals.how[name], name).toBe('signature')
      expect(alone.globals.at[name], name).toBe(heap.globals.at[name])
    }
    expect(Array.from(alone.totals.bytes)).toEqual(Array.from(heap.totals.bytes))
    expect(Array.from(alone.state)).toEqual(Array.from(heap.state))
  })
})

describe('toma analyze on the aarch64 google/tcmalloc core', () => {
  it('reads it as a user would, with --exe, --sysroot and --debug-file-directory: the live bytes the process counted', async () => {
    const work = testTemp('gtc-arm64-cli')
    const core = await sparseCorePath(path.join(DIR, 'core.sparse.br'))
    const sysroot = await brotliTreePath(path.join(ARM64_FIXTURE, 'sysroot'))
    const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as GoogleTruth
    const r = await runToma(['analyze', core, '--exe', path.join(DIR, 'gtcdemo'), '--sysroot', sysroot, '--debug-file-directory', path.join(DIR, 'debug'), '--index', path.join(work, 'core.idx'), '--json'], {cwd: work})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const summary = JSON.parse(r.stdout) as {allocator: {kind: string; version: string; pageSize: number}; states: Array<{state: string; bytes: number}>}
    expect(summary.allocator).toMatchObject({kind: 'google/tcmalloc', version: '2026-08', pageSize: 8192})
    expect(summary.states.find(s => s.state === STATE_NAMES[LIVE])?.bytes).toBe(truth.properties['generic.current_allocated_bytes'])
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)
})
