import {beforeEach} from 'vitest'

/**
 * Lets the test process's event loop turn once before every test. A file whose tests and hooks
 * run long stretches of synchronous work (in-process analyses of one fixture core after another)
 * otherwise never reaches the loop's poll phase: vitest's reply to the worker's "onTaskUpdate"
 * call waits unread, and when the loop finally turns, the call's 60 s timer (timers phase, first)
 * fires before the reply (poll phase) is read: "[vitest-worker]: Timeout calling onTaskUpdate", an
 * unhandled error that fails a run whose every test passed. A macrotask before each test reads
 * the reply within one test's time of the call.
 */
beforeEach(() => new Promise<void>(resolve => setImmediate(resolve)))
