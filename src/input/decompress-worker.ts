import fs from 'node:fs'
import {workerData, type MessagePort} from 'node:worker_threads'
import type {CompressionFormat} from './compression-format.js'
import type {SparseFileWriter} from './sparse-file.js'

/** What the thread that waits for this worker hands it (uncompressed-core.ts). */
export interface DecompressJob {
  input: string
  output: string
  format: CompressionFormat
  showProgress: boolean
  /** Set to 1 (and notified) when the result is on the port. */
  done: Int32Array
  port: MessagePort
}

/** A failure is the data's (cut, damaged) unless `io`: reading the file or writing the copy failed (disk full, …). */
export type DecompressResult = {ok: true; size: number} | {ok: false; message: string; io: boolean}

const job = workerData as DecompressJob
let result: DecompressResult
let writer: SparseFileWriter | undefined
let progress: {done(): void} | undefined
// Everything that can fail, module loading included, is inside the try: the waiting thread
// learns of a failure only from the answer this worker posts.
try {
  const {terminalProgress} = await import('../util/terminal-progress.js')
  const {decompressFile} = await import('./decompress.js')
  const {SparseFileWriter} = await import('./sparse-file.js')
  // The waiting thread is blocked: progress goes to fd 2 directly, not through process.stderr.
  const bar = terminalProgress(job.showProgress, text => void fs.writeSync(2, text))
  progress = bar
  writer = new SparseFileWriter(job.output)
  const total = fs.statSync(job.input).size
  let read = 0
  await decompressFile(job.input, job.format, chunk => writer!.write(chunk), n => bar.update(`decompressing ${job.format}`, (read += n), total, 'bytes'))
  writer.finish()
  result = {ok: true, size: writer.size}
} catch (e) {
  writer?.abandon()
  result = {ok: false, message: (e as Error).message || String(e), io: typeof (e as NodeJS.ErrnoException).code === 'string' && (e as NodeJS.ErrnoException).syscall !== undefined}
}
progress?.done()
job.port.postMessage(result)
Atomics.store(job.done, 0, 1)
Atomics.notify(job.done, 0)
