import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {brotliCorePath, brotliTreePath} from '../helpers/fixture-core.js'
import {ARM64_KERNEL_FIXTURE} from '../helpers/arm64-fixture.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

/**
 * A crash core an arm64 kernel wrote (fixtures/arm64/crash-uaf-crash-kernel, made by
 * `fixtures/generate-arm64-kernel.sh crash-uaf-crash`): crashdemo's uaf-crash case
 * (fixtures/crashes/README.md) on Debian 12's arm64 libtcmalloc_minimal, dead of its own SIGSEGV in
 * tc_new. toma's damage query must name it as it does the x86-64 crash cores
 * (test/tcmalloc/crashed-heaps.test.ts): the signal and the crashing thread, the damaged list and
 * the value written over its link, the thread following that value.
 */
const DIR = fileURLToPath(new URL('../../fixtures/arm64/crash-uaf-crash-kernel', import.meta.url))
const temp = testTemp('toma-arm64-crash-')

interface Truth {
  case: string
  threads: Array<{tid: number; role: string; threadCache: string}>
  damage: {kind: string; freed: string; linkAfter: string; list: {tid: number; threadCache: string; sizeClass: number; listAddress: string}}
  threadCacheLists: Array<{role: string; beforeDamage?: {length: number}}>
}
const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as Truth

interface Damage {
  findings: Array<{kind: string; structure: string; structureAddress: string; sizeClass: number; tid: number; value: string; objectsBehind: number; recovered: number}>
  unknownBehindDamage: {objects: number}
  crash: {tid: number; signalName: string; faultAddress: string | null; inAllocator: boolean; frames: string[]; following: {structure: string; value: string; register: string | null} | null} | null
}
let damage: Damage

beforeAll(async () => {
  const core = await brotliCorePath(path.join(DIR, 'core.br'))
  // libc, libstdc++, libgcc_s, libm and ld.so are heapdemo-2.10-kernel's (byte-identical: record.json's
  // sysrootShared); libtcmalloc_minimal is this fixture's own.
  const sysroot = await brotliTreePath(path.join(ARM64_KERNEL_FIXTURE, 'sysroot'))
  const tcmalloc = path.join(await brotliTreePath(path.join(DIR, 'sysroot')), 'usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4.5.10')
  const r = await runToma(['damage', core, '--exe', path.join(DIR, 'crashdemo'), '--sysroot', sysroot, '--tcmalloc', tcmalloc, '--index', path.join(temp, 'a.toma-index'), '--json'])
  expect({status: r.status, stderr: r.stderr.split('\n').filter(l => !l.startsWith('toma: no index'))}).toEqual({status: 0, stderr: ['']})
  damage = JSON.parse(r.stdout) as Damage
}, 300_000)

afterAll(() => fs.rmSync(temp, {recursive: true, force: true}))

describe('an aarch64 crash core from an arm64 kernel (use after free, then SIGSEGV in TCMalloc)', () => {
  const mutator = truth.threads.find(t => t.role === 'mutator')!

  it('the signal, the crashing thread inside TCMalloc, and the bad link it was following', () => {
    expect(truth.case).toBe('uaf-crash')
    const crash = damage.crash!
    expect(crash).toMatchObject({tid: mutator.tid, signalName: 'SIGSEGV', inAllocator: true})
    // The kernel's NT_SIGINFO: the address TCMalloc read is the value written over the link (0x3e8).
    expect(crash.faultAddress).toBe(truth.damage.linkAfter)
    expect(crash.frames[0]).toMatch(/^tc_new\+0x[0-9a-f]+ \(libtcmalloc_minimal\.so\.4\.5\.10\)$/)
    expect(crash.following).toMatchObject({value: truth.damage.linkAfter, structure: expect.stringContaining(`thread cache ${truth.damage.list.threadCache}`)})
    expect(crash.following!.register).toMatch(/^x\d+$/)
  })

  it('the damage: the mutator\'s class-4 list, its head overwritten with the value written through the dangling pointer', () => {
    const l = truth.damage.list
    expect(l.tid).toBe(mutator.tid)
    const found = damage.findings.filter(f => f.structureAddress === l.listAddress)
    expect(found).toHaveLength(1)
    const f = found[0]!
    expect(f).toMatchObject({kind: 'overwritten-link', sizeClass: l.sizeClass, tid: mutator.tid, value: truth.damage.linkAfter})
    expect(f.structure).toContain(`thread cache ${l.threadCache}`)
    expect(f.structure).toContain(`class ${l.sizeClass} list`)
    // The crash's first new Buffer popped the freed object: the list counts one fewer than before the damage.
    const before = truth.threadCacheLists.find(x => x.role === 'mutator')!.beforeDamage!.length
    expect(f.objectsBehind).toBe(before - 1)
    expect(f.recovered + damage.unknownBehindDamage.objects).toBe(f.objectsBehind)
    // Nothing else in the heap is called damaged.
    expect(damage.findings).toHaveLength(1)
  })
})
