import {describe, expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {allocatorActivity} from '../../src/tcmalloc/inside-allocator.js'
import {type BusyTruth, expectBusyHeapExact} from '../helpers/busy-check.js'
import {ARM64_BUSY_LOCK_KERNEL_FIXTURE, openArm64BusyFixture} from '../helpers/arm64-fixture.js'

/**
 * A busy aarch64 core (fixtures/arm64/busy-kernel, made by `fixtures/generate-arm64-kernel.sh busy`):
 * busydemo's five workers allocating and freeing on Debian 12's arm64 libtcmalloc_minimal, gcore'd by
 * gdb inside the arm64 VM while they ran. Its truth is read from the core itself
 * (fixtures/tools/busy-truth.mjs, as for the x86-64 busy cores of test/fixtures/busy.test.ts): the
 * same checks as there. The libraries are heapdemo-2.10-kernel's and crash-uaf-crash-kernel's
 * (byte-identical: record.json's sysrootShared).
 */


describe('a busy aarch64 process, gcore\'d inside an arm64 VM', () => {
  it('no refusal; no live object missed; extra live objects only as many as were in flight; threads inside TCMalloc and locks held named', async () => {
    const {core, program, truth} = await openArm64BusyFixture<BusyTruth>()
    expect(truth.locks.centralLocksRead).toBeGreaterThan(0)
    expect(truth.threadsInTcmalloc.length).toBeGreaterThan(0)
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

  // fixtures/arm64/busy-lock-kernel (generate-arm64-kernel.sh busy-lock: 8 workers, 1 MiB of thread
  // caches in all, the first of five gcores in one boot): worker 106 holds class 24's central lock,
  // stopped in a PLT stub (ReleaseToSpans@plt, called by ReleaseListToSpans under the lock), and the
  // seven other workers sleep in SpinLock::SlowLock on that lock (lock word 2: held, with waiters). The lock check
  // of expectBusyHeapExact has a lock to check; toma names its holder as gdb's frames do.
  it('a central free list\'s lock held: named, with the thread gdb saw inside that list and the threads waiting', async () => {
    const {core, program, truth} = await openArm64BusyFixture<BusyTruth>(ARM64_BUSY_LOCK_KERNEL_FIXTURE)
    try {
      expect(truth.locks.centralLocksHeld.map(l => [l.sizeClass, l.lockword])).toEqual([[24, 2]])
      const heap = analyzeHeap(program)
      const activity = allocatorActivity(program, heap)
      const {extra, inFlight} = expectBusyHeapExact(truth, heap, activity)
      const inCentral = truth.threadsInTcmalloc.filter(t => t.frames.some(f => /CentralFreeList::/.test(f.function ?? '')))
      const waits = (t: (typeof inCentral)[number]) => t.frames.some(f => /SpinLock::SlowLock/.test(f.function ?? ''))
      expect(inCentral.filter(t => !waits(t)).map(t => t.tid)).toEqual([106])
      // Each waiter sleeps in futex(FUTEX_WAIT_PRIVATE) on that very lock word: x0 at the svc is its address.
      const lock = truth.locks.centralLocksHeld[0]!
      const registers = (t: (typeof inCentral)[number]) => (t as unknown as {registers: Record<string, string>}).registers
      expect(inCentral.filter(waits).map(t => [registers(t).x0, registers(t).x1])).toEqual(Array(7).fill([lock.address, '0x80']))
      expect(activity.locks.map(l => ({sizeClass: l.sizeClass, heldBy: l.heldBy, waiting: [...l.waiting].sort()}))).toEqual([
        {sizeClass: 24, heldBy: [106], waiting: inCentral.filter(waits).map(t => t.tid).sort()},
      ])
      console.log(`busy-lock-kernel: ${heap.warnings.list.length} warnings; ${extra} live objects beyond the hooks' record, ${inFlight} of them in flight`)
    } finally {
      core.close()
    }
  }, 300_000)
})
