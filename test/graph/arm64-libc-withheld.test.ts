import path from 'node:path'
import {expect, it} from 'vitest'
import {ROOT_TLS} from '../../src/graph/csr.js'
import {findRoots} from '../../src/graph/scan.js'
import {glibcThreads} from '../../src/program/glibc-threads.js'
import {threadDb} from '../../src/program/thread-db.js'
import {addr, openFixture} from '../helpers/fixture-core.js'
import {ARM64_KERNEL_FIXTURE, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {unreachableObjects} from '../helpers/unreachable.js'

// Architecture.minPthreadSize is a lower bound on glibc's struct pthread, used where libc's file is
// missing: it holds against the size libc itself states (`_thread_db_sizeof_pthread`), x86-64's
// and aarch64's (Debian 12's glibc 2.36: 2368 and 1856, gdb's `p sizeof(struct pthread)`).
it('the lower bound on sizeof(struct pthread) is below what each architecture\'s libc says', async () => {
  const x86 = await openFixture('v2.10-shared')
  const arm = await openArm64Fixture(ARM64_KERNEL_FIXTURE)
  try {
    for (const [{program}, size] of [[x86, 2368], [arm, 1856]] as const) {
      expect(threadDb(program)?.sizeOf('pthread')).toBe(size)
      expect(program.core.arch.minPthreadSize).toBeLessThanOrEqual(size)
    }
  } finally {
    x86.program.core.close()
    arm.core.close()
  }
})

// A kernel's arm64 core with libc's file withheld: no descriptor gives struct pthread's size or
// glibc's thread lists. Each thread's thread pointer (NT_ARM_TLS) less the bound lies inside its
// struct pthread: its stack is cut there and its TLS scanned from there, so no thread's stack runs
// on into the next block's dead frames. What is left unknown is said: glibc's cached stack of the
// exited thread is not found, and the one object only it holds is the one unreachable beyond the
// deliberate leaks.
it('aarch64 without libc\'s file: stacks cut and TLS scanned at the thread pointer less the bound, exactly the leaks plus what only a cached stack holds', async () => {
  const {core, program, truth} = await openArm64Fixture(ARM64_KERNEL_FIXTURE)
  try {
    for (const m of program.modules) if (path.basename(m.module.path) === 'libc.so.6') m.file = null
    expect(glibcThreads(program).pthreadSize).toBeNull()
    const {heap, unreachable} = unreachableObjects(program)
    for (const o of truth.objects) expect(unreachable.has(addr(o.address)), `${o.name} leaked=${o.leaked}`).toBe(o.leaked || o.heldBy?.kind === 'cachedStack')
    expect(truth.objects.filter(o => o.heldBy?.kind === 'cachedStack')).toHaveLength(1)
    const found = findRoots(program, heap)
    expect(found.warnings.list.map(w => w.message)).toEqual([
      expect.stringMatching(/libc file not found.*; each thread's stack is cut and its TLS scanned at its thread pointer less 1536 bytes \(a lower bound on sizeof\(struct pthread\) on aarch64\), and no stack glibc keeps of an exited thread is found$/),
    ])
    const tlsStarts = found.set.ranges.filter(r => r.kind === ROOT_TLS).map(r => r.base).sort((a, b) => a - b)
    expect(tlsStarts).toEqual(core.threads.map(t => t.threadPointer! - 1536).sort((a, b) => a - b))
  } finally {
    core.close()
  }
})
