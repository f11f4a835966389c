import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {allocatorActivity} from '../../src/tcmalloc/inside-allocator.js'
import {brotliCorePath, brotliTreePath} from '../helpers/fixture-core.js'
import {type BusyTruth, expectBusyHeapExact} from '../helpers/busy-check.js'
import {ARM64_KERNEL_FIXTURE} from '../helpers/arm64-fixture.js'

/**
 * A busy aarch64 core (fixtures/arm64/busy-kernel, made by `fixtures/generate-arm64-kernel.sh busy`):
 * busydemo's five workers allocating and freeing on Debian 12's arm64 libtcmalloc_minimal, gcore'd by
 * gdb inside the arm64 VM while they ran. Its truth is read from the core itself
 * (fixtures/tools/busy-truth.mjs, as for the x86-64 busy cores of test/fixtures/busy.test.ts): the
 * same checks as there. The libraries are heapdemo-2.10-kernel's and crash-uaf-crash-kernel's
 * (byte-identical: record.json's sysrootShared).
 */
const DIR = fileURLToPath(new URL('../../fixtures/arm64/busy-kernel', import.meta.url))
const CRASH = fileURLToPath(new URL('../../fixtures/arm64/crash-uaf-crash-kernel', import.meta.url))


describe('a busy aarch64 process, gcore\'d inside an arm64 VM', () => {
  it('no refusal; no live object missed; extra live objects only as many as were in flight; threads inside TCMalloc and locks held named', async () => {
    const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as BusyTruth
    expect(truth.locks.centralLocksRead).toBeGreaterThan(0)
    expect(truth.threadsInTcmalloc.length).toBeGreaterThan(0)
    const sysroot = await brotliTreePath(path.join(ARM64_KERNEL_FIXTURE, 'sysroot'))
    const tcmalloc = path.join(await brotliTreePath(path.join(CRASH, 'sysroot')), 'usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4.5.10')
    const core = Core.open(await brotliCorePath(path.join(DIR, 'core.br')))
    const program = Program.load(core, {exe: path.join(DIR, 'busydemo'), sysroot, tcmalloc})
    const heap = analyzeHeap(program)
    const activity = allocatorActivity(program, heap)
    const {extra, inFlight} = expectBusyHeapExact(truth, heap, activity)
    // The core was kept (of six made) for a check with something to check: a thread caught in
    // CentralFreeList::ReleaseToSpans, waiting for the page heap's lock in a leaf (syscall, CFA = sp),
    // its class's counters and one span's refcount a span behind the page map. No lock was held.
    expect(truth.threadsInTcmalloc.some(t => t.frames.some(f => f.function?.includes('CentralFreeList::ReleaseToSpans')))).toBe(true)
    expect(heap.warnings.list.map(w => w.inFlight ?? null)).toEqual([expect.stringMatching(/^thread \d+ in CentralFreeList::ReleaseToSpans, /), expect.anything(), expect.anything()])
    console.log(`busy-kernel: ${heap.warnings.list.length} warnings; ${extra} live objects beyond the hooks' record, ${inFlight} of them in flight`)
    core.close()
  }, 300_000)
})
