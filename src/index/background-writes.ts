import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
import {MessageChannel, type MessagePort, Worker, receiveMessageOnPort} from 'node:worker_threads'
import {awaitSignal} from '../util/await-signal.js'
import {isShared} from '../util/shared-arrays.js'

/** A write the writer thread is handed: bytes of a shared array and where they go in the file. */
export interface BackgroundWrite {
  fd: number
  bytes: Uint8Array
  position: number
  /** Word 0 set to 1 (and notified) once the bytes are written: the array may then be written over; 2 if the write failed. */
  written?: Int32Array
}

/** Signal words: [0] writes done (failed ones too), [1] 1 once a write failed, [2] 1 once the thread runs. */
export const WRITES_DONE = 0
export const WRITE_FAILED = 1
export const STARTED = 2

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

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly signal: Int32Array,
  ) {}

  /** The writer thread, or null where its compiled file is not there (sources run by the test runner). */
  static start(): BackgroundWrites | null {
    const script = new URL('./background-write-worker.js', import.meta.url)
    if (!fs.existsSync(fileURLToPath(script))) return null
    const {port1, port2} = new MessageChannel()
    const signal = new Int32Array(new SharedArrayBuffer(12))
    const worker = new Worker(script, {workerData: {port: port2, signal}, transferList: [port2]})
    worker.unref()
    return new BackgroundWrites(worker, port1, signal)
  }

  write(fd: number, a: ArrayBufferView, position: number, written?: Int32Array): void {
    if (!isShared(a)) throw new Error('background write of an unshared array')
    const write: BackgroundWrite = {fd, bytes: new Uint8Array(a.buffer, a.byteOffset, a.byteLength), position, written}
    this.port.postMessage(write)
    this.posted++
  }

  /** Waits until every write handed over is done; throws the first failure's message. */
  drain(): void {
    // Once the thread runs, every write it is handed is counted, failed or not.
    if (!awaitSignal(this.signal, WRITES_DONE, this.posted, STARTED)) throw new Error('the writer thread did not start')
    const failure = this.failure()
    if (failure !== null) throw new Error(failure)
  }

  /** Waits until `written`, handed with a write, is raised (the thread has nothing else to do). */
  awaitWritten(written: Int32Array): void {
    if (!awaitSignal(written, 0, 1, STARTED, undefined, this.signal)) throw new Error('the writer thread did not start')
  }

  /** The first failed write's message, if one has failed by now (without waiting for the rest). */
  failure(): string | null {
    if (Atomics.load(this.signal, WRITE_FAILED) !== 1) return null
    this.failed ??= (receiveMessageOnPort(this.port)?.message as {error?: string} | undefined)?.error ?? 'a write on the writer thread failed'
    return this.failed
  }

  /** Ends the thread (after `drain`). */
  close(): void {
    this.port.close()
    void this.worker.terminate()
  }
}
