import fs from 'node:fs'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {analyzeGoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {LIVE, STATE_NAMES} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import {ARM64_FIXTURE, ARM64_KERNEL_FIXTURE} from '../helpers/arm64-fixture.js'
import {brotliTreePath, sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {checkCacheOwners, checkClassCounts, checkCounters, checkLiveObjects, checkSampled, checkStateBytes, type GoogleTruth} from './truth-checks.js'

// google/tcmalloc fce3f55 (release build, 8 KiB pages) cross-built for aarch64 (fixtures/arm64/README.md),
// one executable run twice: under qemu-aarch64-static (a QEMU-user core, per-thread caches: QEMU user
// mode has no rseq) and in the arm64 VM with 2 vCPUs (the kernel's core, per-CPU caches on rseq).
// The same checks against the process's own figures as the x86-64 cores'.
const ARM64 = path.dirname(ARM64_FIXTURE)
const BUILD = `${ARM64}/gtc-2026-08-release-perthread-aarch64`
const CORES = [
  // libc, libstdc++, libm, libgcc_s and ld.so: the same Debian 12 arm64 files heapdemo-2.10 ran with,
  // at the paths the loader's list names (QEMU's core) or NT_FILE names (the kernel's: /usr/lib/…)
  {id: 'gtc-2026-08-release-perthread-aarch64', kind: 'QEMU-user core, per-thread caches', perCpu: false, sysroot: ARM64_FIXTURE},
  {id: 'gtc-2026-08-release-percpu-aarch64-kernel', kind: "kernel's core, per-CPU caches", perCpu: true, sysroot: ARM64_KERNEL_FIXTURE},
]
type Case = (typeof CORES)[number]

async function open(c: Case) {
  const dir = `${ARM64}/${c.id}`
  const core = Core.open(await sparseCorePath(path.join(dir, 'core.sparse.br')))
  const sysroot = await brotliTreePath(path.join(c.sysroot, 'sysroot'))
  // one executable and its debug file for both cores
  const program = Program.load(core, {exe: path.join(BUILD, 'gtcdemo'), sysroot, debugDirectories: [path.join(BUILD, 'debug')]})
  const truth = JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8')) as GoogleTruth
  return {core, program, truth, heap: analyzeGoogleHeap(program)}
}
const opened = new Map<string, ReturnType<typeof open>>()
const shared = (c: Case) => opened.get(c.id) ?? opened.set(c.id, open(c)).get(c.id)!
afterAll(async () => {
  for (const o of opened.values()) (await o).core.close()
})

describe.each(CORES.map(c => [c.kind, c] as const))('google/tcmalloc on aarch64 (%s)', (_kind, c) => {
  it('is an aarch64 core of family 2026-08, a release build, 8 KiB pages, in the cache mode the process told', async () => {
    const {core, heap, truth} = await shared(c)
    expect(core.arch.name).toBe('aarch64')
    expect(heap.layout.family).toBe('2026-08')
    expect(heap.layout.build).toBe('release')
    expect(heap.pageSize).toBe(2 ** truth.pageShift)
    expect(heap.pageSize).toBe(8192)
    expect(truth.perCpuActive).toBe(c.perCpu)
    expect(heap.perCpuActive).toBe(c.perCpu)
  })

  it("reads the layout from the build's DWARF, and it is the table's (x86-64's) for the family", async () => {
    const {program, heap} = await shared(c)
    expect(program.executable?.debug?.how).toBe('build-id')
    expect(heap.how).toMatch(/^layout from the DWARF of .*\.debug, the same as the table's family 2026-08[ (]/)
  })

  it("counts every state's bytes as the process's own properties do", async () => {
    const {heap, truth} = await shared(c)
    checkStateBytes(heap, truth)
  })

  it('finds each object the program holds live, at its start, at least its allocated size', async () => {
    const {heap, truth} = await shared(c)
    checkLiveObjects(heap, truth)
  })

  it('reads every sampled allocation with the size the program asked for', async () => {
    const {heap, truth} = await shared(c)
    checkSampled(heap, truth)
  })

  it("says which CPU's or thread's cache holds each cached object, and agrees with tcmalloc's own counters", async () => {
    const {heap, truth} = await shared(c)
    checkCacheOwners(heap)
    checkCounters(heap, truth)
    // per-CPU: the slabs of exactly the CPUs the threads ran on (gtcdemo pins its workers to CPUs 0 and 1) hold objects
    const cpus = new Set(heap.frontCaches.filter(f => f.objects > 0).map(f => f.cpu))
    expect(cpus).toEqual(c.perCpu ? new Set(truth.threads.map(t => t.cpu)) : new Set([null]))
  })

  it('gives the same heap from the core alone, its globals found by their signatures', async () => {
    const {core, heap} = await shared(c)
    const bare = Program.load(core, {exe: path.join(BUILD, 'gtcdemo')})
    for (const m of bare.modules) m.file = null
    const alone = analyzeGoogleHeap(bare)
    for (const name of ['pageMap', 'sizeMap', 'transferCache', 'pageAllocator'] as const) {
      expect(alone.globals.how[name], name).toBe('signature')
      expect(alone.globals.at[name], name).toBe(heap.globals.at[name])
    }
    if (c.perCpu) expect(alone.globals.at.cpuCache).toBe(heap.globals.at.cpuCache)
    expect(Array.from(alone.totals.bytes)).toEqual(Array.from(heap.totals.bytes))
    expect(Array.from(alone.state)).toEqual(Array.from(heap.state))
  })
})

describe('toma analyze on the aarch64 google/tcmalloc cores', () => {
  it.each(CORES.map(c => [c.kind, c] as const))('reads the %s as a user would, with --exe, --sysroot and --debug-file-directory: the live bytes the process counted', async (_kind, c) => {
    const work = testTemp('gtc-arm64-cli')
    const core = await sparseCorePath(path.join(ARM64, c.id, 'core.sparse.br'))
    const sysroot = await brotliTreePath(path.join(c.sysroot, 'sysroot'))
    const truth = JSON.parse(fs.readFileSync(path.join(ARM64, c.id, 'truth.json'), 'utf8')) as GoogleTruth
    const r = await runToma(['analyze', core, '--exe', path.join(BUILD, 'gtcdemo'), '--sysroot', sysroot, '--debug-file-directory', path.join(BUILD, 'debug'), '--index', path.join(work, 'core.idx'), '--json'], {cwd: work})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const summary = JSON.parse(r.stdout) as {allocator: {kind: string; version: string; pageSize: number}; states: Array<{state: string; bytes: number}>}
    expect(summary.allocator).toMatchObject({kind: 'google/tcmalloc', version: '2026-08', pageSize: 8192})
    expect(summary.states.find(s => s.state === STATE_NAMES[LIVE])?.bytes).toBe(truth.properties['generic.current_allocated_bytes'])
    // The vtable tier above the heap layer: each class's objects, as the program kept them.
    await checkClassCounts(core, path.join(work, 'core.idx'), truth, work)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)
})
