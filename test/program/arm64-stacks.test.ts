import {afterAll, expect, it} from 'vitest'
import {unwindThread} from '../../src/program/unwind.js'
import {addr} from '../helpers/fixture-core.js'
import {openArm64Fixture} from '../helpers/arm64-fixture.js'

let opened: ReturnType<typeof openArm64Fixture> | undefined
const fixture = () => (opened ??= openArm64Fixture())
afterAll(async () => (await opened)?.core.close())

// gdb-multiarch's backtraces of the aarch64 fixture (truth.gdbStacks, fixtures/generate-arm64.sh):
// the CFI unwinder with aarch64's registers (return address column x30, sp 31) gives each frame's
// pc and CFA as gdb does. gdb stops at main (backtrace past-main is off) and gives a thread's
// outermost frame (clone's) no CFA; there the walk ends too.
it('aarch64: every thread unwinds to gdb-multiarch\'s frames, pc and CFA', async () => {
  const {program, truth} = await fixture()
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
})
