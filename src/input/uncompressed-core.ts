import fs from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'
import {EXIT_OUTPUT_FAILED, TomaError} from '../errors.js'
import {cacheFolderBeside} from '../util/index-location.js'
import {fileCompression, type CompressionFormat} from './compression-format.js'
import {createTemporary, writeFileSafely} from '../util/temporary-file.js'
import {openRegularFile} from '../util/regular-file.js'
import {progressWanted} from '../util/terminal-progress.js'
import type {DecompressJob, DecompressResult} from './decompress-worker.js'
import {DONE, WorkerJob} from '../util/worker-job.js'

/** A compressed core as given, and where its decompressed copy is. */
export interface CompressedCore {
  /** The compressed file (absolute), its size and modification time: its identity. */
  path: string
  size: number
  mtimeMs: number
  format: CompressionFormat
  /** The decompressed copy (a sparse file in the cache folder), reused while the identity holds. */
  uncompressedPath: string
  /** What the user should know of the copy (one line each): it was made again, and why. */
  notes: string[]
}

/** Bytes read from each end of the compressed file for its identity (besides path, size and mtime). */
const EDGE = 2 ** 20
/** The record of a copy's own identity, beside it: `<copy>.identity`. */
const IDENTITY = '.identity'

/**
 * The decompressed copy of a compressed core (zstd, xz, lz4, gzip: known by magic, whatever the
 * name), made once and kept in the cache folder beside it under a name keyed by the compressed
 * file's path, size, mtime and first and last MiB; null when the file is not compressed.
 *
 * The copy is untrusted on reuse as much as the core: it is used again only while it is the very
 * file this code made (a regular file of this user, of the size, mtime, ctime and inode recorded
 * beside it, and of the same sampled content), so a copy cut short, edited or swapped since is
 * made again, and the user told. It is written to a temporary file (temporary-file.ts) and
 * renamed when complete, bounded by the core's own headers and the disk's free space; a failure
 * (one clear TomaError) leaves nothing behind.
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
  const source: CompressedCore = {path: abs, size: stat.size, mtimeMs: stat.mtimeMs, format, uncompressedPath, notes: []}
  const changed = copyChange(uncompressedPath)
  if (changed === null) return source
  if (changed !== 'absent') source.notes.push(`the decompressed copy ${uncompressedPath} ${changed}; decompressing ${file} again`)
  // Copies of earlier versions of this file are stale: the file changed since.
  for (const old of fs.readdirSync(dir)) {
    if (old.startsWith(base) && (old.endsWith('.core') || old.endsWith('.core' + IDENTITY))) fs.rmSync(path.join(dir, old), {force: true})
  }
  const tmp = createTemporary(uncompressedPath)
  let result: DecompressResult
  try {
    result = decompressInWorker({input: abs, outputFd: tmp.fd, outputDir: dir, format, showProgress})
  } catch (e) {
    tmp.abandon()
    throw e
  }
  if (!result.ok) {
    tmp.abandon()
    if (result.io) throw new TomaError(`${file}: cannot decompress it into ${dir}: ${result.message}`, EXIT_OUTPUT_FAILED)
    throw new TomaError(`${file}: ${format} data cut short, damaged or not a core (${result.message})`)
  }
  tmp.commit()
  writeFileSafely(uncompressedPath + IDENTITY, JSON.stringify(copyIdentity(uncompressedPath)))
  if (result.unbounded) source.notes.push(`${file}: decompressed without a bound from its headers (${result.unbounded})`)
  return source
}

/** Removes a copy that turned out to be no core toma can read: it would fail again. */
export function discardCopy(copy: CompressedCore): void {
  fs.rmSync(copy.uncompressedPath, {force: true})
  fs.rmSync(copy.uncompressedPath + IDENTITY, {force: true})
}

interface CopyIdentity {
  size: number
  mtimeMs: number
  ctimeMs: number
  ino: number
  sample: string
}

/** Samples of a copy's content hashed for its identity, besides its first and last 64 KiB. */
const SAMPLES = 62
const SAMPLE = 4096

/** The identity of the copy at `file` (a regular file of this user: checked by the caller). */
function copyIdentity(file: string): CopyIdentity {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  try {
    const s = fs.fstatSync(fd)
    const h = crypto().createHash('sha1')
    const buf = Buffer.alloc(16 * SAMPLE)
    const at = [0, Math.max(0, s.size - buf.length)]
    for (let i = 1; i <= SAMPLES; i++) at.push(Math.floor((s.size * i) / (SAMPLES + 1)))
    for (const [k, pos] of at.entries()) {
      const n = fs.readSync(fd, buf, 0, k < 2 ? buf.length : SAMPLE, pos)
      h.update(buf.subarray(0, n))
    }
    return {size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino, sample: h.digest('hex')}
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * null when the copy at `file` is the one this code made, 'absent' when there is none, else what
 * is wrong with it (a phrase: "was changed since it was made (size …)").
 */
function copyChange(file: string): string | null {
  const stat = fs.lstatSync(file, {throwIfNoEntry: false})
  if (!stat) return 'absent'
  if (!stat.isFile()) return 'is not a regular file'
  if (process.geteuid && stat.uid !== process.geteuid()) return 'belongs to another user'
  let recorded: CopyIdentity
  try {
    recorded = JSON.parse(fs.readFileSync(file + IDENTITY, 'utf8')) as CopyIdentity
  } catch {
    return 'has no record of what it was when made'
  }
  let now: CopyIdentity
  try {
    now = copyIdentity(file)
  } catch (e) {
    return `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`
  }
  if (now.size !== recorded.size) return `was changed since it was made (${now.size} bytes, made ${recorded.size}: cut short or grown)`
  if (now.ino !== recorded.ino || now.ctimeMs !== recorded.ctimeMs || now.mtimeMs !== recorded.mtimeMs) return 'was changed since it was made (its inode, change or modification time differ)'
  if (now.sample !== recorded.sample) return 'was changed since it was made (its content differs)'
  return null
}

// node:crypto (and node:worker_threads, worker-job.ts) are loaded only for a compressed core:
// loading them costs every query about 5 ms of its start-up (docs/ARCHITECTURE.md, "Start-up design").
const require = createRequire(import.meta.url)
const crypto = (): typeof import('node:crypto') => require('node:crypto')

const hash = (data: string | Buffer) => crypto().createHash('sha1').update(data).digest('hex')

/** A key of the file's content that is cheap for a multi-gigabyte file: size, mtime, first and last MiB. */
function identity(file: string, size: number, mtimeMs: number): string {
  const h = crypto().createHash('sha1').update(`${size}:${mtimeMs}:`)
  const fd = openRegularFile(file)
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
function decompressInWorker(job: DecompressJob): DecompressResult {
  const worker = WorkerJob.start('decompression worker', new URL('./decompress-worker.js', import.meta.url), job)
  try {
    // The worker answers on every path (decompress-worker.ts catches everything); until then this thread sleeps.
    if (!worker.await(DONE, 1)) return {ok: false, message: 'the decompression worker did not start', io: false}
    return worker.next<DecompressResult>() ?? {ok: false, message: 'the decompression worker ended without an answer', io: false}
  } finally {
    worker.end()
  }
}
