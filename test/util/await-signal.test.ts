import {Worker} from 'node:worker_threads'
import {describe, expect, it} from 'vitest'
import {awaitSignal} from '../../src/util/await-signal.js'

// The wait every worker job of the analysis uses (scan, reverse edges, dominators, index writes).
describe('awaitSignal', () => {
  it('sleeps until another thread moves the word to the target', async () => {
    const signal = new Int32Array(new SharedArrayBuffer(8))
    const worker = new Worker(
      `const {workerData: s} = require('node:worker_threads')
       Atomics.store(s, 1, 1)
       setTimeout(() => { Atomics.store(s, 0, 2); Atomics.notify(s, 0) }, 200)`,
      {eval: true, workerData: signal},
    )
    const t0 = Date.now()
    expect(awaitSignal(signal, 0, 2, 1, 60_000)).toBe(true)
    expect(Atomics.load(signal, 0)).toBe(2)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150)
    await worker.terminate()
  })

  it('gives up on a thread that never started, instead of waiting for ever', () => {
    const signal = new Int32Array(new SharedArrayBuffer(8))
    const t0 = Date.now()
    expect(awaitSignal(signal, 0, 1, 1, 100)).toBe(false)
    expect(Date.now() - t0).toBeLessThan(5_000)
  })

  it('gives up on a thread that never started, its start word in another array', () => {
    const signal = new Int32Array(new SharedArrayBuffer(4))
    const started = new Int32Array(new SharedArrayBuffer(4))
    const t0 = Date.now()
    expect(awaitSignal(signal, 0, 1, 0, 100, started)).toBe(false)
    expect(Date.now() - t0).toBeLessThan(5_000)
    Atomics.store(started, 0, 1)
    Atomics.store(signal, 0, 1)
    expect(awaitSignal(signal, 0, 1, 0, 100, started)).toBe(true)
  })

  it('without a start word, a word already at the target returns at once', () => {
    const signal = Int32Array.of(3)
    expect(awaitSignal(signal, 0, 3)).toBe(true)
  })
})
