/**
 * The worker side of worker-job.ts: a worker script's body runs through `workerBody`, which raises
 * STARTED before it, posts its error (TomaError kept as such) if it throws, and raises DONE
 * however it ends, so that the thread waiting on it never waits for ever. The body loads its
 * modules itself (dynamic imports inside it), so that even a failure to load is reported.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {DONE, STARTED, type WorkerFailure, type WorkerStart} from './worker-job.js'

/** Raises `word` of the job's signal to `value` and wakes the thread waiting on it. */
export function raise(signal: Int32Array, word: number, value: number): void {
  Atomics.store(signal, word, value)
  Atomics.notify(signal, word)
}

/** The message a failure is posted as. */
export async function failureOf(e: unknown): Promise<WorkerFailure> {
  const {TomaError} = await import('../errors.js')
  return {error: e instanceof Error ? e.message : String(e), toma: e instanceof TomaError}
}

/**
 * Runs `body` with what the job was handed; posts its failure on the port if it throws; raises
 * DONE at the end, then closes the thread's channel to its parent (`keepOpen`: the body's port
 * handlers go on, as the index writer's do).
 */
export async function workerBody<D>(body: (start: WorkerStart<D>) => unknown, keepOpen = false): Promise<void> {
  const start = workerData as WorkerStart<D>
  raise(start.signal, STARTED, 1)
  try {
    await body(start)
  } catch (e) {
    start.port.postMessage(await failureOf(e))
  } finally {
    if (!keepOpen) {
      raise(start.signal, DONE, 1)
      parentPort?.close()
    }
  }
}
