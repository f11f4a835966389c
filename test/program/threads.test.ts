import {describe, expect, it} from 'vitest'
import {codeLabel} from '../../src/queries/code-label.js'
import {deadFrames} from '../../src/program/dead-frames.js'
import {nptlThreads} from '../../src/program/nptl.js'
import {unwindThread} from '../../src/program/unwind.js'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {addr, brotliCorePath, fixtureCorePath, fixtureFlags, fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTempFile} from '../helpers/test-temp.js'

/** gdb prints `worker0(void*)`, `app::work::park()`, `__GI___pthread_cond_wait`; toma the symbol's demangled name. */
const bare = (name: string | null) => (name ?? '').replace(/\(.*$/, '').replace(/^(__GI_|__libc_|___?)/, '')

describe.each(fixtureIndex().map(f => [f.id] as const))('threads and stacks on %s', id => {
  it('NPTL: every thread\'s TCB, tid, start routine and argument as the program recorded them', async () => {
    const f = await openFixture(id)
    const truth = f.truth 
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
      if (!t.startRoutine) throw new Error('truth.threads[].startRoutine missing')
      expect(codeLabel(f.program, n.startRoutine!).function, `${t.tid}`).toBe(t.startRoutine)
      expect(n.startArg, `${t.tid}`).toBe(addr(t.startArg!))
      expect(n.stackBlock!.start).toBeLessThan(n.pthread)
    }
    f.program.core.close()
  })

  it('unwinds every thread to gdb\'s frames (function and CFA), stopping at the thread\'s start', async () => {
    const f = await openFixture(id)
    const truth = f.truth 
    if (!truth.gdbStacks) throw new Error('truth.gdbStacks missing: the generator records gdb\'s backtraces')
    for (const g of truth.gdbStacks) {
      const thread = f.program.core.threads.find(t => t.tid === g.tid)!
      const u = unwindThread(f.program, thread)
      // gdb lists inlined calls and tail calls as frames of their own, sharing their caller's CFA:
      // compare the physical frames, one per distinct CFA. gdb gives the outermost frame no CFA (0x0).
      const physical = new Map<number, string[]>()
      for (const fr of g.frames) if (addr(fr.cfa ?? '0x0') !== 0) physical.set(addr(fr.cfa!), [...(physical.get(addr(fr.cfa!)) ?? []), bare(fr.function)])
      const ours = u.frames.slice(0, physical.size)
      expect(ours.map(fr => fr.cfa), `thread ${g.tid}`).toEqual([...physical.keys()])
      ours.forEach((fr, i) => {
        const names = [...physical.values()][i]!
        const mine = codeLabel(f.program, fr.pc, i === 0).function
        // Without a symbol for the pc (a static function of a stripped libc), toma says module+offset: nothing to compare.
        if (mine !== null && names.some(n => n !== '')) expect(names.some(n => n === bare(mine) || bare(mine).endsWith(n) || n.endsWith(bare(mine))), `thread ${g.tid} #${i}: ${mine} vs ${names}`).toBe(true)
      })
      const outermost = g.frames.at(-1)!
      if (addr(outermost.cfa ?? '0x0') === 0) {
        // The outermost frame gdb names without a CFA is ours too, and there the walk ends.
        expect(u.frames.length, `thread ${g.tid}: ${u.stop}`).toBe(physical.size + 1)
        expect(u.stop).toMatch(/outermost/)
        expect(u.frames.at(-1)!.pc).toBe(addr(outermost.pc))
      }
    }
    f.program.core.close()
  })

  it('finds the returned frame that held pointers, in the right thread, and they stay non-roots', async () => {
    const f = await openFixture(id)
    const truth = f.truth 
    if (!truth.deadFrame) throw new Error('truth.deadFrame missing')
    const thread = f.program.core.threads.find(t => t.tid === truth.deadFrame!.tid)!
    const block = nptlThreads(f.program).threads.find(t => t.tid === thread.tid)?.stackBlock
    const frames = deadFrames(f.program, thread.sp, block?.start ?? 0)
    // Each slot the program filled lies in a returned frame of the function that filled it, and still holds its object.
    truth.deadFrame.pointers.forEach((slot, i) => {
      const d = frames.find(x => addr(slot) >= x.start && addr(slot) < x.end)
      expect(d, `slot ${slot} in a dead frame`).toBeDefined()
      expect(codeLabel(f.program, d!.pc, false).function).toBe(truth.deadFrame!.function)
      expect(f.program.core.memory.readU64(addr(slot))).toBe(addr(truth.deadFrame!.targets[i]!))
    })
    // None of them is in any other thread's returned frames.
    for (const other of f.program.core.threads.filter(t => t !== thread)) {
      const ob = nptlThreads(f.program).threads.find(t => t.tid === other.tid)?.stackBlock
      for (const d of deadFrames(f.program, other.sp, ob?.start ?? 0)) {
        for (const slot of truth.deadFrame.pointers) expect(addr(slot) >= d.start && addr(slot) < d.end).toBe(false)
      }
    }
    f.program.core.close()
  })
})

describe('toma threads and toma stack through the CLI', () => {
  it('list every thread with its start routine and stack, and a stack with its frames, heap pointers and returned frames', async () => {
    const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
    const f = await openFixture(entry.id)
    const flags = fixtureFlags(entry)
    const index = testTempFile(`toma-threads-${process.pid}.idx`)
    const run = async (args: string[]) => {
      const r = await runToma([...args, f.corePath, '--exe', flags.exe, '--tcmalloc', flags.tcmalloc!, '--index', index, '--json'])
      expect(r.status, r.stderr).toBe(0)
      return JSON.parse(r.stdout)
    }
    const list = await run(['threads'])
    expect(list.threads.map((t: {tid: number}) => t.tid).sort()).toEqual(f.truth.threads.map(t => t.tid).sort())
    for (const t of f.truth.threads) {
      const row = list.threads.find((x: {tid: number}) => x.tid === t.tid)
      if (t.startRoutine) expect(row.startRoutine, `${t.tid}`).toMatch(new RegExp(`^${t.startRoutine}\\+0x0 `))
      else expect(row.startRoutine).toBeNull()
      expect(row.startArg).toBe(t.startArg)
      expect(row.stack.used).toBeGreaterThan(0)
    }
    // What only one thread holds: the worker's stack box is held by its stack alone.
    const box = f.truth.objects.find(o => o.name === 'workerStackBox')!
    const holder = list.threads.find((x: {tid: number}) => x.tid === (box.heldBy as {tid: number}).tid)
    expect(holder.onlyThisThread.bytes).toBeGreaterThanOrEqual(box.size)

    const dead = f.truth.deadFrame
    const stack = await run(['stack', String(dead.tid)])
    expect(stack.stop).toMatch(/outermost/)
    expect(stack.frames.map((x: {function: string | null}) => x.function)).toContain('app::work::park(int)')
    const returned = stack.deadFrames.find((d: {function: string}) => d.function === dead.function)
    expect(returned, 'the returned frame of fill_scratch').toBeDefined()
    expect(returned.pointers.map((p: {object: {address: string}}) => p.object.address)).toEqual(expect.arrayContaining(dead.targets))
    // --no-returned: the same frames, without the returned ones (text and JSON).
    const live = await run(['stack', String(dead.tid), '--no-returned'])
    expect(live.frames).toEqual(stack.frames)
    expect(live).not.toHaveProperty('deadFrames')
    const text = async (args: string[]) => {
      const r = await runToma([...args, f.corePath, '--index', index])
      expect(r.status, r.stderr).toBe(0)
      return r.stdout
    }
    const full = await text(['stack', String(dead.tid)])
    const cut = full.indexOf('\n\nReturned frames below the stack pointer: ')
    expect(cut).toBeGreaterThan(0)
    expect(full).toContain(dead.function)
    expect(await text(['stack', String(dead.tid), '--no-returned'])).toBe(full.slice(0, cut) + '\n')
    // The same leads, found once by analyze and read from the index by the queries: each target
    // was last seen in fill_scratch's returned frame, at the slot the program filled.
    const leaks = await run(['leaks', '--limit', '100000'])
    for (const [i, target] of dead.targets.entries()) {
      const lead = {tid: dead.tid, function: dead.function, at: dead.pointers[i]}
      const found = await run(['find-object', target])
      expect(found.object.lastSeen, target).toContainEqual(expect.objectContaining(lead))
      const refs = await run(['refs', target])
      expect(refs.lastSeen).toEqual(found.object.lastSeen)
      expect(leaks.largest.find((o: {address: string}) => o.address === target).lastSeen).toEqual(found.object.lastSeen)
    }
    const missing = await runToma(['stack', '1', f.corePath, '--index', index])
    expect(missing.status).not.toBe(0)
    expect(missing.stderr.trim().split('\n')).toHaveLength(1)
    f.program.core.close()
  })
})

describe('the core\'s signal', () => {
  // gcore's cores hold NT_SIGINFO SIGSTOP (19) with si_code SI_KERNEL (128), the stop of its ptrace
  // attach; the overflow crash core (fixtures/crashes/README.md) holds SIGSEGV with that same code.
  const crashes = fileURLToPath(new URL('../../fixtures/crashes', import.meta.url))
  const signalLine = async (core: string) => {
    const r = await runToma(['info', core])
    expect(r.status, r.stderr).toBe(0)
    return r.stdout.split('\n').find(l => l.startsWith('signal '))
  }
  it('says "stopped by gcore" for gcore\'s own stop only', async () => {
    expect(await signalLine(await fixtureCorePath('v2.10-shared'))).toBe('signal 19 (code 128): stopped by gcore (the SIGSTOP the kernel sends as a debugger attaches)')
    expect(await signalLine(await brotliCorePath(path.join(crashes, 'uaf-before', 'core.br')))).toMatch(/^signal 19 \(code 128\): stopped by gcore /)
    expect(await signalLine(await brotliCorePath(path.join(crashes, 'overflow', 'core.br')))).toBe('signal 11 (code 128, fault address 0x0)')
    expect(await signalLine(await brotliCorePath(path.join(crashes, 'uaf-crash', 'core.br')))).toBe('signal 11 (code 1, fault address 0x3e8)')
  })
})

describe('toma info --json on an x86-64 core', () => {
  it('names each thread\'s pc, sp and thread pointer by the registers, and keeps the keys it had before aarch64 (rip, rsp, fsBase)', async () => {
    const r = await runToma(['info', await fixtureCorePath('v2.10-shared'), '--json'])
    expect(r.status, r.stderr).toBe(0)
    const info = JSON.parse(r.stdout) as {arch: {name: string; pc: string; sp: string; threadPointer: string}; threads: Record<string, unknown>[]}
    expect(info.arch).toEqual({name: 'x86-64', pc: 'rip', sp: 'rsp', threadPointer: 'fs_base'})
    expect(info.threads.length).toBeGreaterThan(1)
    const registers = (t: Record<string, unknown>) => t.registers as Record<string, string>
    const hexOf = (s: string) => '0x' + BigInt(s).toString(16)
    const got = info.threads.map(t => [hexOf(t.pc as string), hexOf(t.sp as string), hexOf(t.threadPointer as string), t.rip, t.rsp, t.fsBase, t.ripSymbol === t.pcSymbol, t.rspMapping !== undefined])
    const want = info.threads.map(t => [registers(t).rip, registers(t).rsp, registers(t).fs_base, t.pc, t.sp, t.threadPointer, true, true])
    expect(got).toEqual(want)
  })
})
