import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {addr} from '../helpers/fixture-core.js'
import {AT_PAGESZ} from '../../src/core/process-info.js'
import {ARM64_64K_FIXTURE, ARM64_FIXTURE, arm64GdbView, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {runToma} from '../helpers/run-toma.js'

// The aarch64 fixture is a QEMU-user core (fixtures/arm64/README.md): its registers and modules are
// compared with what gdb-multiarch printed for it when it was made (gdb.txt), its threads with the
// process's own record (truth.json). The same program ran with 4 KiB pages and with 64 KiB ones
// (QEMU_PAGESIZE, as a 64 KiB-page kernel: the guest's getpagesize() and AT_PAGESZ 65536).
describe.each([
  {pageSize: 4096, dir: ARM64_FIXTURE},
  {pageSize: 65536, dir: ARM64_64K_FIXTURE},
])('an aarch64 core (QEMU user mode, no NT_FILE, no NT_ARM_TLS), $pageSize-byte pages', ({pageSize, dir}) => {
  let opened: ReturnType<typeof openArm64Fixture> | undefined
  const fixture = () => (opened ??= openArm64Fixture(dir))
  afterAll(async () => (await opened)?.core.close())
  const gdb = arm64GdbView(dir)

  it('is read as aarch64: every thread\'s pc and sp equal gdb-multiarch\'s, its tid the process\'s own', async () => {
    const {core, truth} = await fixture()
    expect(core.arch.name).toBe('aarch64')
    expect(gdb.threads.length).toBe(truth.threads.length)
    const read = core.threads.map(t => ({tid: t.tid, pc: `0x${t.pc.toString(16)}`, sp: `0x${t.sp.toString(16)}`})).sort((a, b) => a.tid - b.tid)
    const gdbs = gdb.threads.map(({tid, pc, sp}) => ({tid, pc, sp})).sort((a, b) => a.tid - b.tid)
    expect(read).toEqual(gdbs)
    expect(read.map(t => t.tid)).toEqual(truth.threads.map(t => t.tid).sort((a, b) => a - b))
    // The stack pointer lies in the thread's stack as the process recorded it (workers; the main thread's is the kernel's).
    for (const t of truth.threads.filter(t => t.stackStart)) {
      const thread = core.threads.find(c => c.tid === t.tid)!
      expect(thread.sp).toBeGreaterThanOrEqual(addr(t.stackStart!))
      expect(thread.sp).toBeLessThan(addr(t.stackEnd!))
    }
    // pr_reg is x0–x30, sp, pc, pstate: the named registers are the ones read as sp and pc.
    const names = core.arch.registerNames
    expect(names.length).toBe(34)
    for (const t of core.threads) {
      expect(Number(t.registers[names.indexOf('pc')]!)).toBe(t.pc)
      expect(Number(t.registers[names.indexOf('sp')]!)).toBe(t.sp)
      // QEMU writes no NT_ARM_TLS: the thread pointer is unknown, not guessed.
      expect(t.threadPointer).toBeNull()
    }
  })

  it('finds the modules through r_debug and link_map: the libraries gdb-multiarch lists, each at gdb\'s address', async () => {
    const {core, program, sysroot, exe} = await fixture()
    expect(core.modulesFrom).toMatch(/^link_map \(no NT_FILE\): r_debug through heapdemo's DT_DEBUG, load bias 0x0$/)
    const libraries = program.modules.filter(m => m.module.path !== './heapdemo')
    expect(libraries.map(m => m.module.path).sort()).toEqual(gdb.libraries.map(l => l.path).sort())
    for (const lib of gdb.libraries) {
      const loaded = libraries.find(m => m.module.path === lib.path)!
      // Found under --sysroot at the path the loader named it by.
      expect(loaded.file?.path).toBe(path.join(sysroot, lib.path))
      // gdb's "From" is the start of .text in the process: the file's .text at the module's l_addr.
      expect(loaded.module.loadBias + loaded.file!.section('.text')!.addr, lib.path).toBe(addr(lib.from))
      expect(core.moduleAt(addr(lib.from))).toBe(loaded.module)
    }
    // The executable (-no-pie: load bias 0), from --exe, named by AT_EXECFN.
    expect(program.executable?.module.path).toBe('./heapdemo')
    expect(program.executable?.module.base).toBe(0x400000)
    expect(program.executable?.file?.path).toBe(exe)
    // The threads' pcs lie in the modules gdb names for them (libc.so.6).
    for (const t of core.threads) expect(path.basename(core.moduleAt(t.pc)!.path)).toBe('libc.so.6')
    // Each file's mappings are its PT_LOAD segments in the kernel's pages (AT_PAGESZ): each begins
    // where a mapping of the core begins and ends where one ends (a data segment's last page whole).
    expect(core.auxv.get(AT_PAGESZ)).toBe(BigInt(pageSize))
    const starts = new Set(core.memory.segments.map(s => s.start))
    const ends = new Set(core.memory.segments.map(s => s.end))
    for (const m of libraries.flatMap(l => l.module.mappings)) {
      expect({path: m.path, start: starts.has(m.start), end: ends.has(m.end)}).toEqual({path: m.path, start: true, end: true})
    }
  })
})

it('toma info on the aarch64 core: the architecture, each thread\'s pc, sp and unknown thread pointer, the modules and where they came from', async () => {
  const {corePath, sysroot, exe, core} = await openArm64Fixture()
  core.close()
  const gdb = arm64GdbView()
  const json = await runToma(['info', corePath, '--exe', exe, '--sysroot', sysroot, '--json'])
  expect(json.status, json.stderr).toBe(0)
  const data = JSON.parse(json.stdout) as {arch: {name: string}; threads: Array<{tid: number; pc: string; sp: string; threadPointer: string | null}>; modulesFrom: string; modules: Array<{path: string; found: boolean}>}
  expect(data.arch.name).toBe('aarch64')
  expect(data.threads.map(t => ({tid: t.tid, pc: t.pc, sp: t.sp})).sort((a, b) => a.tid - b.tid)).toEqual(gdb.threads.map(({tid, pc, sp}) => ({tid, pc, sp})).sort((a, b) => a.tid - b.tid))
  expect(data.threads.every(t => t.threadPointer === null)).toBe(true)
  expect(data.modulesFrom).toMatch(/^link_map/)
  expect(data.modules.filter(m => m.found).map(m => m.path).sort()).toEqual(['./heapdemo', ...gdb.libraries.map(l => l.path)].sort())
  const text = await runToma(['info', corePath, '--exe', exe, '--sysroot', sysroot])
  expect(text.stdout).toContain('architecture aarch64')
  expect(text.stdout).toContain('unknown: no NT_ARM_TLS')
  expect(text.stdout).toMatch(/Modules \(8, from link_map \(no NT_FILE\)/)
})
