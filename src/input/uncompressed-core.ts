import fs from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'
import {TomaError} from '../errors.js'
import {cacheFolderBeside} from '../index/index-location.js'
import {fileCompression, type CompressionFormat} from './compression-format.js'
import {progressWanted} from '../util/terminal-progress.js'
import type {DecompressJob, DecompressResult} from './decompress-worker.js'

/** A compressed core as given, and where its decompressed copy is. */
export interface CompressedCore {
  /** The compressed file (absolute), its size and modification time: its identity. */
  path: string
  size: number
  mtimeMs: number
  format: CompressionFormat
  /** The decompressed copy (a sparse file in the cache folder), reused while the identity holds. */
  uncompressedPath: string
}

/** Bytes read from each end of the compressed file for its identity (besides path, size and mtime). */
const EDGE = 1 << 20

/**
 * The decompressed copy of a compressed core (zstd, xz, lz4, gzip: known by magic, whatever the
 * name), made once and kept in the cache folder beside it under a name keyed by the compressed
 * file's path, size, mtime and first and last MiB; null when the file is not compressed. The
 * copy is written as `<name>.partial-<pid>` and renamed when complete, so a cut or damaged file
 * (one clear TomaError) never leaves a copy that a later call would take as valid.
 */
export function uncompressedCore(file: string, showProgress = progressWanted()): CompressedCore | null {
  const format = fileCompression(file)
  if (!format) return null
  const abs = path.resolve(file)
  const stat = fs.statSync(abs)
  const dir = cacheFolderBeside(abs, 'cores')
  const base = `${path.basename(abs).replace(/\.(zst|zstd|xz|lz4|gz)$/, '')}-${hash(abs).slice(0, 10)}-`
  const name = `${base}${identity(abs, stat.size, stat.mtimeMs)}.core`
  const uncompressedPath = path.join(dir, name)
  const source = {path: abs, size: stat.size, mtimeMs: stat.mtimeMs, format, uncompressedPath}
  if (fs.existsSync(uncompressedPath)) return source
  // Copies of earlier versions of this file are stale: the file changed since.
  for (const old of fs.readdirSync(dir)) if (old.startsWith(base) && old.endsWith('.core')) fs.rmSync(path.join(dir, old), {force: true})
  const partial = `${uncompressedPath}.partial-${process.pid}`
  const result = decompressInWorker({input: abs, output: partial, format, showProgress})
  if (!result.ok) {
    fs.rmSync(partial, {force: true})
    if (result.io) throw new TomaError(`${file}: cannot decompress it into ${dir}: ${result.message}`)
    throw new TomaError(`${file}: ${format} data cut short or damaged, no core to read (${result.message})`)
  }
  fs.renameSync(partial, uncompressedPath)
  return source
}

// node:crypto and node:worker_threads are loaded only for a compressed core: loading them costs
// every query about 5 ms of its start-up (README, "Start-up").
const require = createRequire(import.meta.url)
const crypto = (): typeof import('node:crypto') => require('node:crypto')

const hash = (data: string | Buffer) => crypto().createHash('sha1').update(data).digest('hex')

/** A key of the file's content that is cheap for a multi-gigabyte file: size, mtime, first and last MiB. */
function identity(file: string, size: number, mtimeMs: number): string {
  const h = crypto().createHash('sha1').update(`${size}:${mtimeMs}:`)
  const fd = fs.openSync(file, 'r')
  try {
    const buf = Buffer.alloc(Math.min(EDGE, size))
    for (const at of size > EDGE ? [0, size - EDGE] : [0]) {
      const n = fs.readSync(fd, buf, 0, buf.length, at)
      h.update(buf.subarray(0, n))
    }
  } finally {
    fs.closeSync(fd)
  }
  return h.digest('hex').slice(0, 12)
}

/**
 * Runs the streaming decompression on a worker thread and blocks until it ends: the commands
 * open cores synchronously, and the decoders (zlib streams, WASM xz, fzstd) are asynchronous.
 */
function decompressInWorker(job: Omit<DecompressJob, 'done' | 'port'>): DecompressResult {
  const {MessageChannel, receiveMessageOnPort, Worker}: typeof import('node:worker_threads') = require('node:worker_threads')
  const done = new Int32Array(new SharedArrayBuffer(4))
  const {port1, port2} = new MessageChannel()
  const worker = new Worker(new URL('./decompress-worker.js', import.meta.url), {workerData: {...job, done, port: port2}, transferList: [port2]})
  try {
    // The worker answers on every path (decompress-worker.ts catches everything); until then this thread sleeps.
    Atomics.wait(done, 0, 0)
    const message = receiveMessageOnPort(port1)
    return message ? (message.message as DecompressResult) : {ok: false, message: 'the decompression worker ended without an answer', io: false}
  } finally {
    port1.close()
    void worker.terminate()
  }
}
