import {expect} from 'vitest'
import type {TcmallocHeap} from '../../src/tcmalloc/heap.js'
import type {allocatorActivity} from '../../src/tcmalloc/inside-allocator.js'
import {liveObjects} from '../tcmalloc/live-set.js'
import {addr} from './fixture-core.js'

/** A busy core's truth (fixtures/tools/busy-truth.mjs), as far as the checks read it. */
export interface BusyTruth {
  live: Array<[string, number]>
  preHookAllocatedBytes: number
  inFlight: Array<{tid: number; phase: string; address: string | null}>
  threadsInTcmalloc: Array<{tid: number; frames: Array<{function: string | null}>; inHand?: Array<{chain: string[]}>}>
  locks: {pageheapLock: {address: string; lockword: number}; centralLocksHeld: Array<{sizeClass: number; address: string; lockword: number}>; centralLocksRead?: number}
}

/**
 * What a busy core's analysis must say against its truth (test/fixtures/busy.test.ts, and
 * test/tcmalloc/arm64-busy.test.ts): warnings only for structures in flight, no damage, no live
 * object missed, extra live objects only as many as were in flight, the threads inside TCMalloc
 * and the locks held named. Returns the count of extra live objects and of those in flight.
 */
export function expectBusyHeapExact(truth: BusyTruth, heap: TcmallocHeap, activity: ReturnType<typeof allocatorActivity>): {extra: number; inFlight: number} {
  // Warnings only for structures in flight (a thread inside them, their lock held).
  expect(heap.warnings.list.filter(w => !w.inFlight)).toEqual([])
  expect(heap.damage.findings).toEqual([])

  const live = liveObjects(heap)
  const recorded = new Set(truth.live.map(([a]) => addr(a)))
  expect([...recorded].filter(a => !live.has(a))).toEqual([])
  // Beyond the hooks' record: the blocks allocated before the hooks (their bytes recorded by the
  // process), and blocks in flight (allocated, not yet recorded; recorded free, not yet back on a
  // list; taken from a central list into a thread's hands).
  const extra = [...live].filter(([a]) => !recorded.has(a))
  const inHand = new Set(truth.threadsInTcmalloc.flatMap(t => (t.inHand ?? []).flatMap(h => h.chain.map(addr))))
  const flying = new Set(truth.inFlight.filter(f => f.address !== null).map(f => addr(f.address!)))
  const unexplained = extra.filter(([a]) => !flying.has(a) && !inHand.has(a))
  const unknownAddress = truth.inFlight.filter(f => f.address === null).length
  expect(unexplained.reduce((n, [, size]) => n + size, 0)).toBeGreaterThanOrEqual(truth.preHookAllocatedBytes)
  // The three pre-hook blocks, plus at most the in-flight mallocs whose block the process had not yet seen.
  expect(unexplained.length).toBeLessThanOrEqual(3 + unknownAddress)

  // The threads with TCMalloc's frames, as gdb saw them, and the locks held, as the process's core holds them.
  expect(activity.threads.map(t => t.tid).sort()).toEqual(truth.threadsInTcmalloc.map(t => t.tid).sort())
  const held = [
    ...(truth.locks.pageheapLock.lockword ? [{address: addr(truth.locks.pageheapLock.address), word: truth.locks.pageheapLock.lockword}] : []),
    ...truth.locks.centralLocksHeld.map(l => ({address: addr(l.address), word: l.lockword})),
  ]
  expect(activity.locks.map(l => ({address: l.address, word: l.word}))).toEqual(held)
  return {extra: extra.length, inFlight: extra.length - unexplained.length}
}
