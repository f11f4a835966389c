import {describe, expect, it} from 'vitest'
import {codeLabel} from '../../src/analysis/threads.js'
import {deadFrames} from '../../src/program/dead-frames.js'
import {nptlThreads} from '../../src/program/nptl.js'
import {unwindThread} from '../../src/program/unwind.js'
import {addr, fixtureIndex, openFixture, type Truth} from '../helpers/fixture-core.js'

interface ThreadTruth extends Truth {
  threads: Array<{tid: number; pthread: string; role: string; startRoutine?: string; startArg?: string}>
  gdbStacks?: Array<{tid: number; frames: Array<{level: number; pc: string; function: string | null; cfa: string | null}>}>
  deadFrame?: {tid: number; function: string; pointers: string[]}
}

/** gdb prints `worker0(void*)`, `app::work::park()`, `__GI___pthread_cond_wait`; toma the symbol's demangled name. */
const bare = (name: string | null) => (name ?? '').replace(/\(.*$/, '').replace(/^(__GI_|__libc_|___?)/, '')

describe.each(fixtureIndex().map(f => [f.id] as const))('threads and stacks on %s', id => {
  it('NPTL: every thread\'s TCB, tid, start routine and argument as the program recorded them', async () => {
    const f = await openFixture(id)
    const truth = f.truth as ThreadTruth
    const view = nptlThreads(f.program)
    expect(view.how).not.toBe('none')
    for (const t of truth.threads) {
      const n = view.threads.find(x => x.tid === t.tid)!
      expect(n.pthread, `${t.tid}`).toBe(addr(t.pthread))
      expect(n.tidChecked).toBe(true)
      if (view.how !== 'thread_db descriptors') continue
      if (t.role === 'main') {
        expect(n.startRoutine).toBeNull()
        continue
      }
      if (t.startRoutine === undefined) throw new Error('truth.threads[].startRoutine missing')
      expect(codeLabel(f.program, n.startRoutine!).function, `${t.tid}`).toBe(t.startRoutine)
      expect(n.startArg, `${t.tid}`).toBe(addr(t.startArg!))
      expect(n.stackBlock!.start).toBeLessThan(n.pthread)
    }
    f.program.core.close()
  })

  it('unwinds every thread to gdb\'s frames (function and CFA), stopping at the thread\'s start', async () => {
    const f = await openFixture(id)
    const truth = f.truth as ThreadTruth
    if (!truth.gdbStacks) throw new Error('truth.gdbStacks missing: the generator records gdb\'s backtraces')
    for (const g of truth.gdbStacks) {
      const thread = f.program.core.threads.find(t => t.tid === g.tid)!
      const u = unwindThread(f.program, thread)
      // gdb lists inlined calls as frames of their own, sharing their caller's CFA: compare the
      // physical frames, one per distinct CFA, by the outermost gdb name at that CFA.
      const physical = new Map<number, string[]>()
      for (const fr of g.frames) if (fr.cfa) physical.set(addr(fr.cfa), [...(physical.get(addr(fr.cfa)) ?? []), bare(fr.function)])
      const ours = u.frames.slice(0, physical.size)
      expect(ours.map(fr => fr.cfa), `thread ${g.tid}`).toEqual([...physical.keys()])
      ours.forEach((fr, i) => {
        const names = [...physical.values()][i]!
        const mine = bare(codeLabel(f.program, fr.pc, i === 0).function)
        // A stripped libc names its static functions only through a debug file; then both sides may differ in the prefix.
        if (names.some(n => n !== '')) expect(names.some(n => n === mine || mine.endsWith(n) || n.endsWith(mine)), `thread ${g.tid} #${i}: ${mine} vs ${names}`).toBe(true)
      })
    }
    f.program.core.close()
  })

  it('finds the returned frame that held pointers, in the right thread, and they stay non-roots', async () => {
    const f = await openFixture(id)
    const truth = f.truth as ThreadTruth
    if (!truth.deadFrame) throw new Error('truth.deadFrame missing')
    const thread = f.program.core.threads.find(t => t.tid === truth.deadFrame!.tid)!
    const block = nptlThreads(f.program).threads.find(t => t.tid === thread.tid)?.stackBlock
    const frames = deadFrames(f.program, thread.rsp, block?.start ?? 0)
    const words = new Map<number, number>()
    for (const d of frames) {
      const bytes = f.program.core.memory.readBytes(d.start, d.end - d.start)!
      for (let i = 0; i + 8 <= bytes.length; i += 8) words.set(Number(bytes.readBigUInt64LE(i)), d.pc)
    }
    for (const p of truth.deadFrame.pointers) {
      const pc = words.get(addr(p))
      expect(pc, `pointer ${p} in a dead frame`).toBeDefined()
      expect(codeLabel(f.program, pc!, false).function).toBe(truth.deadFrame.function)
    }
    // None of them is in any other thread's returned frames.
    for (const other of f.program.core.threads.filter(t => t !== thread)) {
      const ob = nptlThreads(f.program).threads.find(t => t.tid === other.tid)?.stackBlock
      for (const d of deadFrames(f.program, other.rsp, ob?.start ?? 0)) {
        const bytes = f.program.core.memory.readBytes(d.start, d.end - d.start)
        for (let i = 0; bytes && i + 8 <= bytes.length; i += 8) expect(truth.deadFrame.pointers.map(addr)).not.toContain(Number(bytes.readBigUInt64LE(i)))
      }
    }
    f.program.core.close()
  })
})
