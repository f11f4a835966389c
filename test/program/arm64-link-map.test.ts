import {afterAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {readLinkMap} from '../../src/core/link-map.js'
import {PT_DYNAMIC} from '../../src/elf/constants.js'
import {Program} from '../../src/program/program.js'
import {openArm64Fixture} from '../helpers/arm64-fixture.js'

let opened: ReturnType<typeof openArm64Fixture> | undefined
const fixture = () => (opened ??= openArm64Fixture())
afterAll(async () => (await opened)?.core.close())

/** The file offset of a process address in the core (it must be dumped there). */
function fileOffset(core: Core, address: number): number {
  const s = core.memory.segmentAt(address)!
  expect(address - s.start + 8).toBeLessThanOrEqual(s.presentSize)
  return s.fileOffset + address - s.start
}

const word = (v: number) => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(BigInt(v))
  return b
}

// The link_map walk of a core without NT_FILE (core/link-map.ts) on damaged copies of the aarch64
// fixture: a list that loops ends at the loop with what came before, a zero DT_DEBUG gives no
// modules but the executable; each says so where toma info shows the modules' source, and nothing throws.
it('a link_map list that loops back, and a DT_DEBUG of 0: the modules before the loop, or the executable alone, each with why', async () => {
  const {core, program, corePath, exe, sysroot} = await fixture()
  const dynamic = program.executable!.file!.segments.find(s => s.type === PT_DYNAMIC)!.vaddr + program.executable!.module.loadBias
  const list = readLinkMap(core.memory, dynamic)
  expect(list.problem).toBeNull()
  expect(list.entries.length).toBe(8) // the executable and gdb's 7 libraries (QEMU maps no vDSO for the guest here)
  // The third object's l_next back to the second.
  const loop = Core.open(corePath, {patches: [{offset: fileOffset(core, list.entries[2]!.at + 24), bytes: word(list.entries[1]!.at)}]})
  try {
    const p = Program.load(loop, {exe, sysroot})
    expect(loop.modulesFrom).toMatch(/the list ends early: the link_map list loops back to 0x/)
    expect(p.modules.length).toBeGreaterThan(1)
    expect(p.modules.length).toBeLessThan(program.modules.length)
  } finally {
    loop.close()
  }
  // DT_DEBUG's value (the dynamic entry tagged 21) set to 0: r_debug unknown.
  let at = dynamic
  while (core.memory.readU64(at) !== 21) at += 16
  const zero = Core.open(corePath, {patches: [{offset: fileOffset(core, at + 8), bytes: word(0)}]})
  try {
    const p = Program.load(zero, {exe, sysroot})
    expect(zero.modulesFrom).toBe('the executable alone (no NT_FILE, and DT_DEBUG is 0: the dynamic loader had not set up r_debug)')
    expect(p.modules.map(m => [m.module.path, m.module.base, m.file?.path])).toEqual([['./heapdemo', 0x400000, exe]])
  } finally {
    zero.close()
  }
})
