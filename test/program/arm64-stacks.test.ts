import {afterAll, expect, it} from 'vitest'
import {nptlThreads} from '../../src/program/nptl.js'
import {pthreadAddress} from '../../src/program/thread-pointer.js'
import {unwindThread} from '../../src/program/unwind.js'
import {codeLabel} from '../../src/queries/code-label.js'
import {addr} from '../helpers/fixture-core.js'
import {ARM64_64K_FIXTURE, ARM64_BUSY_KERNEL_FIXTURE, ARM64_BUSY_LOCK_KERNEL_FIXTURE, ARM64_KERNEL_FIXTURE, ARM64_PAC_KERNEL_FIXTURE, arm64GdbView, openArm64BusyFixture, openArm64Fixture} from '../helpers/arm64-fixture.js'
import type {Program} from '../../src/program/program.js'
import type {Truth} from '../helpers/fixture-core.js'

let opened: ReturnType<typeof openArm64Fixture> | undefined
const fixture = () => (opened ??= openArm64Fixture())
afterAll(async () => (await opened)?.core.close())

// gdb-multiarch's backtraces of the aarch64 fixture (truth.gdbStacks, fixtures/generate-arm64.sh):
// the CFI unwinder with aarch64's registers (return address column x30, sp 31) gives each frame's
// pc and CFA as gdb does. gdb stops at main (backtrace past-main is off) and gives a thread's
// outermost frame (clone's) no CFA; there the walk ends too.
it('aarch64: every thread unwinds to gdb-multiarch\'s frames, pc and CFA', async () => {
  const {program, truth} = await fixture()
  expectGdbStacks(program, truth)
})

// The same program with 64 KiB pages (QEMU_PAGESIZE=65536: its libraries 64 KiB apart, its stacks
// in 64 KiB pages), and the kernel's core of it in an arm64 VM (a PIE; modules from NT_FILE; return
// addresses with the PAC mask the core records).
it.each([
  {what: '64 KiB pages', dir: ARM64_64K_FIXTURE},
  {what: 'a kernel-written core', dir: ARM64_KERNEL_FIXTURE},
])('aarch64, $what: every thread unwinds to gdb-multiarch\'s frames, pc and CFA', async ({dir}) => {
  const {core, program, truth} = await openArm64Fixture(dir)
  try {
    expectGdbStacks(program, truth)
  } finally {
    core.close()
  }
})

// The same program built -mbranch-protection=standard (fixtures/arm64/heapdemo-2.10-pac-kernel): each of
// its functions signs x30 (PACIASP) before saving it, so the return addresses saved on its frames
// carry pointer-authentication bits (NT_ARM_PAC_MASK's instruction mask, bits 48-54). Unstripped,
// none is in a module and the walk would stop at the first; stripped, the frames are gdb's.
it('aarch64, return addresses signed (PAC): every thread unwinds to gdb-multiarch\'s frames, pc and CFA', async () => {
  const {core, program, truth} = await openArm64Fixture(ARM64_PAC_KERNEL_FIXTURE)
  try {
    expectGdbStacks(program, truth)
    const exe = program.executable!.module
    let signed = 0
    for (const t of core.threads) {
      const mask = t.pacInstructionMask!
      expect(mask).toBe(0x7f000000000000n)
      const frames = unwindThread(program, t).frames
      for (let i = 0; i + 1 < frames.length; i++) {
        const {pc, sp, cfa} = frames[i]!
        if (program.moduleAt(pc)?.module !== exe) continue
        // the word heapdemo's frame saved its caller's return address in, as it is in the core
        const words = core.memory.readBytes(sp, cfa - sp)!
        const saved = Array.from({length: words.length / 8}, (_, k) => words.readBigUInt64LE(k * 8)).filter(w => (w & ~mask) === BigInt(frames[i + 1]!.pc))
        expect(saved, `thread ${t.tid} frame ${i}`).toHaveLength(1)
        expect(saved[0]! & mask, `thread ${t.tid} frame ${i}: 0x${saved[0]!.toString(16)}`).not.toBe(0n)
        signed++
      }
    }
    // main's frame, and each worker's five in heapdemo (heapdemo_workerN, run_stage, its lambda, park, wait_forever)
    expect(signed).toBe(1 + 5 * (core.threads.length - 1))
  } finally {
    core.close()
  }
})

// The busy cores (fixtures/arm64/busy-kernel, busy-lock-kernel): in each, worker 106 stopped in a PLT
// stub of libtcmalloc_minimal (busy-kernel: `tcmalloc::allocate_full_malloc_oom(unsigned long)@plt`,
// tc_malloc's tail call through it; busy-lock-kernel: `CentralFreeList::ReleaseToSpans(void*)@plt`,
// holding class 24's lock). A stub has no CFI and saves nothing: its caller's return address is
// still in x30 and its CFA is sp, as gdb unwinds a pc in .plt. The frame-pointer chain would skip that caller.
it.each([['busy-kernel', ARM64_BUSY_KERNEL_FIXTURE], ['busy-lock-kernel', ARM64_BUSY_LOCK_KERNEL_FIXTURE]])('aarch64, a thread stopped in a PLT stub (%s): every thread\'s frames are gdb-multiarch\'s, pc and CFA', async (_name, dir) => {
  const {core, program, truth} = await openArm64BusyFixture(dir)
  try {
    const inPlt = truth.gdbStacks.filter(s => s.frames[0]!.function?.endsWith('@plt'))
    expect(inPlt.map(s => s.tid)).toEqual([106])
    const frames = unwindThread(program, core.threads.find(t => t.tid === 106)!).frames
    expect(frames[1]!.how).toBe('link-register')
    expectGdbStacks(program, truth)
    // named as gdb names them, the stub too (`symbol@plt`, after its GOT slot's JUMP_SLOT relocation)
    const gdb = inPlt[0]!.frames.filter(f => f.function !== null)
    expect(gdb.map(f => codeLabel(program, addr(f.pc), f.level === 0).function)).toEqual(gdb.map(f => f.function))
  } finally {
    core.close()
  }
})

function expectGdbStacks(program: Program, truth: Truth) {
  expect(truth.gdbStacks.map(s => s.tid)).toEqual(program.core.threads.map(t => t.tid).sort((a, b) => a - b))
  for (const g of truth.gdbStacks) {
    const u = unwindThread(program, program.core.threads.find(t => t.tid === g.tid)!)
    const withCfa = g.frames.filter(f => f.cfa !== null)
    expect(u.frames.slice(0, withCfa.length).map(f => ({pc: f.pc, cfa: f.cfa})), `thread ${g.tid}`).toEqual(withCfa.map(f => ({pc: addr(f.pc), cfa: addr(f.cfa!)})))
    const outermost = g.frames.at(-1)!
    if (outermost.cfa === null) {
      expect(u.frames.length, `thread ${g.tid}: ${u.stop}`).toBe(g.frames.length)
      expect(u.frames.at(-1)!.pc).toBe(addr(outermost.pc))
      expect(u.stop).toMatch(/outermost/)
    } else {
      expect(outermost.function).toBe('main')
    }
  }
}

// No NT_ARM_TLS: each thread's struct pthread is found on glibc's lists by its tid, as gdb's
// libthread_db finds it ("Thread 0x… (LWP …)"), and is the pthread_self() the process recorded.
it('aarch64 without NT_ARM_TLS: every thread\'s struct pthread is gdb\'s and the process\'s own; its start routine read from it', async () => {
  const {program, truth} = await fixture()
  const gdb = arm64GdbView()
  for (const t of program.core.threads) {
    const mine = pthreadAddress(program, t)
    expect(mine, `${t.tid}`).toBe(addr(truth.threads.find(x => x.tid === t.tid)!.pthread))
    expect(mine, `${t.tid}`).toBe(addr(gdb.threads.find(x => x.tid === t.tid)!.pthread))
  }
  const nptl = nptlThreads(program)
  expect(nptl.how).toBe('thread_db descriptors')
  for (const t of truth.threads) {
    const n = nptl.threads.find(x => x.tid === t.tid)!
    expect(n.tidChecked).toBe(true)
    expect(n.startRoutine === null ? null : codeLabel(program, n.startRoutine).function, `${t.tid}`).toBe(t.startRoutine)
    expect(n.startArg === null ? null : `0x${n.startArg.toString(16)}`, `${t.tid}`).toBe(t.startArg)
  }
})
