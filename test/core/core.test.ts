import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {addr, fixtureIndex, openFixture} from '../helpers/fixture-core.js'

const fixtures = fixtureIndex()

describe.each(fixtures.map(f => [f.id] as const))('core reader on %s', id => {
  it('reads threads, stacks, modules and memory as the process recorded them', async () => {
    const {core, program, truth, entry} = await openFixture(id)
    expect(core.threads.map(t => t.tid).sort()).toEqual(truth.threads.map(t => t.tid).sort())
    expect(core.process.pid).toBe(truth.pid)
    // fs_base is the thread's pthread_t on x86-64 glibc.
    for (const t of truth.threads) expect(core.threads.find(c => c.tid === t.tid)!.threadPointer).toBe(addr(t.pthread))
    for (const t of core.threads) {
      const stack = core.stackSegment(t)
      expect(stack, `thread ${t.tid} rsp`).toBeDefined()
      expect(t.sp).toBeGreaterThanOrEqual(stack!.start)
    }
    const lib = core.modules.find(m => /^libtcmalloc/.test(path.basename(m.path)))
    if (entry.tcmalloc) {
      expect(lib).toBeDefined()
      expect(lib!.base % 4096).toBe(0)
      expect(lib!.buildId).toMatch(/^[0-9a-f]{40}$/)
      // The library file we were given is the one the process ran with.
      const loaded = program.modules.find(m => m.module === lib)!
      expect(loaded.verified).toBe(true)
    } else {
      expect(lib).toBeUndefined()
    }
    for (const m of truth.magic) expect(core.memory.readU64Big(addr(m.address))).toBe(BigInt(m.value))
    core.close()
  })
})
