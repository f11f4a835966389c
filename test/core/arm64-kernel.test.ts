import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {rtldThreadLists} from '../../src/program/rtld-thread-lists.js'
import {threadDb} from '../../src/program/thread-db.js'
import {pthreadAddress} from '../../src/program/thread-pointer.js'
import {addr} from '../helpers/fixture-core.js'
import {ARM64_KERNEL_FIXTURE, arm64GdbView, openArm64Fixture} from '../helpers/arm64-fixture.js'

// Cores of heapdemo in a real arm64 Linux under qemu-system-aarch64 (fixtures/arm64/README.md):
// the kernel's own (SIGSEGV, core_pattern to a file) and gdb's gcore of the same process just
// before. Compared with gdb-multiarch's view of the kernel's core (gdb.txt) and the process's record.
describe.each(['core.br', 'gcore.br'])('an aarch64 core from an arm64 kernel (%s)', name => {
  let opened: ReturnType<typeof openArm64Fixture> | undefined
  const fixture = () => (opened ??= openArm64Fixture(ARM64_KERNEL_FIXTURE, name))
  afterAll(async () => (await opened)?.core.close())
  const gdb = arm64GdbView(ARM64_KERNEL_FIXTURE)

  it('every thread\'s pc and sp are gdb-multiarch\'s, its tid the process\'s own', async () => {
    const {core, truth} = await fixture()
    expect(core.arch.name).toBe('aarch64')
    const read = core.threads.map(t => ({tid: t.tid, pc: `0x${t.pc.toString(16)}`, sp: `0x${t.sp.toString(16)}`})).sort((a, b) => a.tid - b.tid)
    expect(read).toEqual(gdb.threads.map(({tid, pc, sp}) => ({tid, pc, sp})).sort((a, b) => a.tid - b.tid))
    expect(read.map(t => t.tid)).toEqual(truth.threads.map(t => t.tid).sort((a, b) => a - b))
    // -cpu max has pointer authentication: each thread's NT_ARM_PAC_MASK, bits 48–54 (48-bit addresses, no tags).
    for (const t of core.threads) expect(t.pacInstructionMask).toBe(0x7f000000000000n)
    // NT_SIGINFO: the kernel's core says the SIGSEGV it died of (kill: si_code SI_USER 0); gdb's gcore the SIGSTOP of its attach.
    expect(core.signal?.signo).toBe(name === 'core.br' ? 11 : 19)
  })

  it('its modules come from NT_FILE: the libraries gdb-multiarch lists, each at gdb\'s address', async () => {
    const {core, program, sysroot, exe} = await fixture()
    expect(core.modulesFrom).toBe('NT_FILE')
    // NT_FILE names each file by the path the kernel resolved (/usr/lib/…/libtcmalloc.so.4.5.10 under
    // Debian's merged /usr); gdb by the loader's name (/lib/…/libtcmalloc.so.4, the soname): the same file.
    for (const lib of gdb.libraries) {
      const at = core.moduleAt(addr(lib.from))
      expect(at, lib.path).toBeDefined()
      const loaded = program.modules.find(m => m.module === at)!
      expect(loaded.file?.soname ?? path.basename(at!.path)).toBe(path.basename(lib.path))
      expect(loaded.file?.path).toBe(path.join(sysroot, at!.path))
      // gdb's "From" is the start of .text in the process.
      expect(loaded.module.loadBias + loaded.file!.section('.text')!.addr, lib.path).toBe(addr(lib.from))
    }
    expect(program.executable?.module.path).toBe('/fixture/heapdemo')
    expect(program.executable?.file?.path).toBe(exe)
  })

  it('each thread\'s pointer comes from NT_ARM_TLS: struct pthread at tp − sizeof(struct pthread), as gdb and the process name it', async () => {
    const {program, truth} = await fixture()
    const size = threadDb(program)!.sizeOf('pthread')!
    expect(size).toBe(1856) // Debian 12's glibc 2.36 on aarch64 (x86-64's is 2368)
    for (const t of program.core.threads) {
      expect(t.threadPointer, `${t.tid}`).not.toBeNull()
      const pthread = addr(truth.threads.find(x => x.tid === t.tid)!.pthread)
      expect(t.threadPointer! - size, `${t.tid}`).toBe(pthread)
      expect(pthreadAddress(program, t), `${t.tid}`).toBe(pthread)
      expect(pthreadAddress(program, t), `${t.tid}`).toBe(addr(gdb.threads.find(x => x.tid === t.tid)!.pthread))
    }
  })
})

// With glibc's thread lists unreadable (`_dl_stack_used` and `_dl_stack_user` heads zeroed in a copy
// of the kernel's core), each thread's struct pthread still comes from its NT_ARM_TLS thread pointer.
it('aarch64 with NT_ARM_TLS: struct pthread from the thread pointer alone, where glibc\'s lists are broken', async () => {
  const {core, corePath, exe, sysroot, program, truth} = await openArm64Fixture(ARM64_KERNEL_FIXTURE)
  try {
    const lists = rtldThreadLists(program)
    if (lists.why !== null) throw new Error(lists.why)
    const patches = [lists.stackUser, lists.stackUsed!].map(at => {
      const s = core.memory.segmentAt(at)!
      return {offset: s.fileOffset + at - s.start, bytes: Buffer.alloc(8)}
    })
    const broken = Core.open(corePath, {patches})
    try {
      const p = Program.load(broken, {exe, sysroot})
      for (const t of broken.threads) expect(pthreadAddress(p, t), `${t.tid}`).toBe(addr(truth.threads.find(x => x.tid === t.tid)!.pthread))
    } finally {
      broken.close()
    }
  } finally {
    core.close()
  }
})
