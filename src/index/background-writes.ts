import {FIRST_JOB_WORD, WorkerJob} from '../util/worker-job.js'
import {isShared} from '../util/shared-arrays.js'

/** A write the writer thread is handed: bytes of a shared array and where they go in the file. */
export interface BackgroundWrite {
  fd: number
  bytes: Uint8Array
  position: number
  /** Word 0 set to 1 (and notified) once the bytes are written: the array may then be written over; 2 if the write failed. */
  written?: Int32Array
}

/** The job's signal words: writes done (failed ones too), and 1 once a write failed. */
export const WRITES_DONE = FIRST_JOB_WORD
export const WRITE_FAILED = FIRST_JOB_WORD + 1

/**
 * Writes of shared arrays to a file on a worker thread, so that the thread that computed them goes
 * on with its next phase while the kernel copies them (on a big core the index's last arrays are
 * hundreds of MB: a write costs about as much as the phase that follows it). The caller must not
 * change an array once handed over, and must `drain` before closing the file.
 */
export class BackgroundWrites {
  private posted = 0
  /** The failed write's message, once read from the port. */
  private failed: string | undefined

  private constructor(private readonly job: WorkerJob) {}

  /** The writer thread. */
  static start(): BackgroundWrites {
    return new BackgroundWrites(WorkerJob.start('index writer thread', new URL('./background-write-worker.js', import.meta.url), null, 2))
  }

  write(fd: number, a: ArrayBufferView, position: number, written?: Int32Array): void {
    if (!isShared(a)) throw new Error('background write of an unshared array')
    const write: BackgroundWrite = {fd, bytes: new Uint8Array(a.buffer, a.byteOffset, a.byteLength), position, written}
    this.job.port.postMessage(write)
    this.posted++
  }

  /** Waits until every write handed over is done; throws the first failure's message. */
  drain(): void {
    // Once the thread runs, every write it is handed is counted, failed or not.
    if (!this.job.await(WRITES_DONE, this.posted)) throw new Error('the writer thread did not start')
    const failure = this.failure()
    if (failure !== null) throw new Error(failure)
  }

  /** Waits until `written`, handed with a write, is raised (the thread has nothing else to do). */
  awaitWritten(written: Int32Array): void {
    if (!this.job.await(0, 1, written)) throw new Error('the writer thread did not start')
  }

  /** The first failed write's message, if one has failed by now (without waiting for the rest). */
  failure(): string | null {
    if (Atomics.load(this.job.signal, WRITE_FAILED) !== 1) return null
    this.failed ??= this.job.next<{error?: string}>()?.error ?? 'a write on the writer thread failed'
    return this.failed
  }

  /** Ends the thread (after `drain`). */
  close(): void {
    this.job.end()
  }
}
