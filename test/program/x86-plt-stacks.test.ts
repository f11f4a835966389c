import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {unwindThread} from '../../src/program/unwind.js'
import {codeLabel} from '../../src/queries/code-label.js'
import {addr, brotliCorePath, FIXTURES, type Truth} from '../helpers/fixture-core.js'

const BUSY = fileURLToPath(new URL('../../fixtures/busy', import.meta.url))

// x86-64's PLT stub is a jmp: the call that reached it pushed the return address, at [rsp]. Unlike
// aarch64's (test/program/arm64-stacks.test.ts), the linker gives .plt call-frame information of its
// own in .eh_frame (CFA rsp+8 in a stub, by a DWARF expression on rip), so the CFI unwinder needs
// nothing more. Two x86-64 busy cores have a thread stopped in a stub (busy-2 in the executable's
// exp@plt, busy-6 in libtcmalloc_minimal's HookList::Traverse@plt): its frames are gdb's.
it.each([['busy-2', 22326], ['busy-6', 22322]])('x86-64, a thread stopped in a PLT stub (%s, thread %i): its frames are gdb\'s, pc and CFA, by .plt\'s CFI', async (id, tid) => {
  const truth = JSON.parse(fs.readFileSync(path.join(BUSY, id, 'truth.json'), 'utf8')) as Truth
  const core = Core.open(await brotliCorePath(path.join(BUSY, id, 'core.br')))
  try {
    const program = Program.load(core, {exe: path.join(BUSY, 'busydemo'), tcmalloc: path.join(FIXTURES, 'v2.10-minimal', 'libtcmalloc_minimal.so.4')})
    const gdb = truth.gdbStacks.find(s => s.tid === tid)!
    expect(gdb.frames[0]!.function).toMatch(/@plt$/)
    // gdb gives the outermost frame (clone3's) CFA 0x0
    const withCfa = gdb.frames.filter(f => addr(f.cfa ?? '0x0') !== 0)
    const frames = unwindThread(program, core.threads.find(t => t.tid === tid)!).frames
    expect(frames.slice(0, withCfa.length).map(f => ({pc: f.pc, cfa: f.cfa}))).toEqual(withCfa.map(f => ({pc: addr(f.pc), cfa: addr(f.cfa!)})))
    expect(frames[0]!.cfa).toBe(frames[0]!.sp + 8)
    expect(frames[1]!.how).toBe('cfi')
    // named as gdb names them, the stub too (`symbol@plt`, after its GOT slot's JUMP_SLOT relocation)
    const named = gdb.frames.filter(f => f.function !== null)
    expect(named.map(f => codeLabel(program, addr(f.pc), f.level === 0).function)).toEqual(named.map(f => f.function))
  } finally {
    core.close()
  }
})
