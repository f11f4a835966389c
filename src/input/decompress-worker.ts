import fs from 'node:fs'
import {workerBody} from '../util/worker-body.js'
import type {CompressionFormat} from './compression-format.js'

/** What the thread that waits for this worker hands it (uncompressed-core.ts). */
export interface DecompressJob {
  input: string
  /** The copy, created empty by the waiting thread (which closes, renames or removes it). */
  outputFd: number
  /** The folder the copy is in: its free space is watched. */
  outputDir: string
  format: CompressionFormat
  showProgress: boolean
}

/** A failure is the data's (cut, damaged, not a core) unless `io`: reading the file or writing the copy failed (disk full, …). */
export type DecompressResult = {ok: true; size: number; unbounded: string | null} | {ok: false; message: string; io: boolean}

// The result is on the port when the job's DONE word is raised (worker-body.ts).
await workerBody<DecompressJob>(async ({data: job, port}) => {
  let result: DecompressResult
  let progress: {done(): void} | undefined
  // Everything that can fail, module loading included, is inside the try: the waiting thread
  // learns of a failure only from the answer this worker posts.
  try {
    const {terminalProgress} = await import('../util/terminal-progress.js')
    const {decompressFile} = await import('./decompress.js')
    const {SparseFileWriter} = await import('./sparse-file.js')
    const {CoreExtent, ExtentReached} = await import('./core-extent.js')
    const {FreeSpaceWatch} = await import('./free-space.js')
    // The waiting thread is blocked: progress goes to fd 2 directly, not through process.stderr.
    const bar = terminalProgress(job.showProgress, text => void fs.writeSync(2, text))
    progress = bar
    const writer = new SparseFileWriter(job.outputFd)
    const extent = new CoreExtent()
    const space = new FreeSpaceWatch(job.outputDir)
    const total = fs.statSync(job.input).size
    let read = 0
    try {
      await decompressFile(
        job.input,
        job.format,
        chunk => {
          writer.write(extent.take(chunk))
          space.check(writer.dataBytes)
        },
        n => bar.update(`decompressing ${job.format}`, (read += n), total, 'bytes'),
      )
    } catch (e) {
      // Data past the core's extent is not the core's: the copy is whole without it.
      if (!(e instanceof ExtentReached)) throw e
    }
    writer.finish()
    result = {ok: true, size: writer.size, unbounded: extent.unbounded}
  } catch (e) {
    result = {ok: false, message: (e as Error).message || String(e), io: (e as {io?: boolean}).io === true || (typeof (e as NodeJS.ErrnoException).code === 'string' && (e as NodeJS.ErrnoException).syscall !== undefined)}
  }
  progress?.done()
  port.postMessage(result)
})
