/**
 * One worker thread running a job's script, as every worker job of toma starts one (the object
 * scan, the reverse edges, the dominator pass, the index writes, the decompression): the job's
 * data and one end of a message channel in workerData, and signal words in shared memory that the
 * calling thread sleeps on (it has nothing else to do while it waits). Word STARTED is raised
 * when the worker's body runs, so that a wait gives up on a worker that never ran (it could not
 * be created or load its modules) instead of waiting for ever; word DONE once the body has ended,
 * its error (if any) posted first. The job's own words follow (FIRST_JOB_WORD).
 *
 * The worker side of the same protocol is worker-body.ts.
 */
import fs from 'node:fs'
import {createRequire} from 'node:module'
import {fileURLToPath, pathToFileURL} from 'node:url'
import type {MessagePort, Worker} from 'node:worker_threads'
import {TomaError} from '../errors.js'
import {awaitSignal} from './await-signal.js'

/** Signal word 0: 1 once the worker's body runs. */
export const STARTED = 0
/** Signal word 1: 1 once the worker's body has ended (its error posted before). */
export const DONE = 1
/** The first word a job may use for its own protocol. */
export const FIRST_JOB_WORD = 2

/** What the worker's body is handed in workerData. */
export interface WorkerStart<D> {
  data: D
  port: MessagePort
  signal: Int32Array
}

/** What a worker's body posts when it fails: its message, and whether it was a TomaError (the user's to act on). */
export interface WorkerFailure {
  error: string
  toma: boolean
}

// node:worker_threads is loaded only when a worker starts: loading it costs every query about
// 5 ms of its start-up (README, "Start-up"), and only an analysis or a compressed core needs it.
const require = createRequire(import.meta.url)
const threads = (): typeof import('node:worker_threads') => require('node:worker_threads')

/**
 * The worker script's file: `script` itself where it exists (the compiled program), else, where
 * the sources run (the test runner imports src/…/x.ts, and a worker thread runs no TypeScript),
 * the compiled file under dist/ (npm test builds it first). Throws where neither is there: a
 * worker path is never skipped.
 */
export function workerScript(script: URL): URL {
  const path = fileURLToPath(script)
  if (fs.existsSync(path)) return script
  const at = path.lastIndexOf('/src/')
  const compiled = at < 0 ? null : `${path.slice(0, at)}/dist${path.slice(at)}`
  if (compiled && fs.existsSync(compiled)) return pathToFileURL(compiled)
  throw new Error(`worker script ${path} not found${compiled ? ` (nor ${compiled}: build first)` : ''}`)
}

/** A worker thread started on a job's script (see the file's comment). */
export class WorkerJob {
  private constructor(
    private readonly worker: Worker,
    /** This thread's end of the channel. */
    readonly port: MessagePort,
    /** STARTED, DONE, then the job's own words. */
    readonly signal: Int32Array,
    /** What a failure is reported as ("scan worker"). */
    private readonly what: string,
  ) {}

  /**
   * Starts `script` (workerScript resolves it) with `data` (plain data and shared arrays: what it
   * holds is held by the worker for as long as its body runs) and `jobWords` signal words of the
   * job's own.
   */
  static start<D>(what: string, script: URL, data: D, jobWords = 0): WorkerJob {
    const {MessageChannel, Worker} = threads()
    const {port1, port2} = new MessageChannel()
    const signal = new Int32Array(new SharedArrayBuffer(4 * (FIRST_JOB_WORD + jobWords)))
    const start: WorkerStart<D> = {data, port: port2, signal}
    const worker = new Worker(workerScript(script), {workerData: start, transferList: [port2]})
    worker.unref()
    return new WorkerJob(worker, port1, signal, what)
  }

  /**
   * Sleeps until `in`[word] reaches `target`; false where the worker's body did not start within
   * the start timeout (await-signal.ts). `in`: another shared array the worker raises, else the
   * job's signal words.
   */
  await(word: number, target: number, inArray: Int32Array = this.signal): boolean {
    return awaitSignal(inArray, word, target, STARTED, undefined, this.signal)
  }

  /** Sleeps until the body has ended (throws where it never started). */
  awaitDone(): void {
    if (!this.await(DONE, 1)) throw new Error(`${this.what}: the worker thread did not start`)
  }

  /** The next message posted, if one is there (without waiting). */
  next<T>(): T | undefined {
    return threads().receiveMessageOnPort(this.port)?.message as T | undefined
  }

  /** Raises `word` to `value` and wakes the worker waiting on it. */
  tell(word: number, value: number): void {
    Atomics.store(this.signal, word, value)
    Atomics.notify(this.signal, word)
  }

  /** Ends the thread and the channel. */
  end(): void {
    this.port.close()
    void this.worker.terminate()
  }

  /** The error to throw for a worker's failure: a TomaError stays one, anything else names the job. */
  failure(f: WorkerFailure): Error {
    return f.toma ? new TomaError(f.error) : new Error(`${this.what} failed: ${f.error}`)
  }

  /** Throws where `message` is a failure posted by the worker. */
  check<T extends object>(message: T | WorkerFailure | undefined): T | undefined {
    if (message && 'error' in message && typeof message.error === 'string') throw this.failure(message as WorkerFailure)
    return message as T | undefined
  }
}
