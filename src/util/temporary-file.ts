import fs from 'node:fs'
import path from 'node:path'
import {createRequire} from 'node:module'
import {EXIT_OUTPUT_FAILED, TomaError} from '../errors.js'
import {guardFile, releaseFile} from './cleanup-guard.js'

/**
 * Files toma writes, written safely where others may write too (root runs toma in folders of
 * cores that other users made): a temporary file is created with O_EXCL and O_NOFOLLOW under a
 * name no one can predict (so no planted symlink or file is ever followed or reused), guarded
 * against this process dying (cleanup-guard.ts), and renamed over the final name when complete
 * (rename replaces a symlink there, never what it points to). A failure removes it.
 */

/** `.NAME.toma-tmp-PID-RANDOM`: the PID lets a later run sweep the files of a process that is gone. */
const TEMPORARY = /^\..*\.toma-tmp-(\d+)-[0-9a-f]{16}$/
/** Names earlier versions of toma used for their temporaries (predictable: now only swept). */
const OLD_TEMPORARY = [/\.toma-index\.tmp-(\d+)$/, /\.core\.partial-(\d+)$/]

export interface TemporaryFile {
  /** The temporary's path (readable while written: the analysis reads arrays back from it). */
  readonly path: string
  readonly fd: number
  /** Closes it (when open) and renames it over `final`. */
  commit(): void
  /** Closes and removes it. Safe to call more than once, and after commit (then does nothing). */
  abandon(): void
}

/**
 * A new temporary file in `final`'s folder, opened for writing (and reading). `mode` applies to
 * the file when created (0600 by default: what toma writes holds the process's memory or figures
 * about it, and a core is its owner's alone).
 */
export function createTemporary(final: string, mode = 0o600): TemporaryFile {
  const dir = path.dirname(path.resolve(final))
  sweepStaleTemporaries(dir)
  // Keep the name within NAME_MAX (255) whatever the final name's length.
  const base = path.basename(final).slice(0, 180)
  const {O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW} = fs.constants
  for (let attempt = 0; ; attempt++) {
    const tmp = path.join(dir, `.${base}.toma-tmp-${process.pid}-${randomHex()}`)
    guardFile(tmp)
    let fd: number
    try {
      fd = fs.openSync(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode)
    } catch (e) {
      releaseFile(tmp)
      const code = (e as NodeJS.ErrnoException).code
      // Someone made a file of that name first: take another (never theirs).
      if (code === 'EEXIST' && attempt < 8) continue
      throw writeFailure(final, e)
    }
    return temporary(tmp, fd, final)
  }
}

function temporary(tmp: string, fd: number, final: string): TemporaryFile {
  let open = true
  let done = false
  const close = () => {
    if (!open) return
    open = false
    fs.closeSync(fd)
  }
  return {
    path: tmp,
    fd,
    commit() {
      if (done) return
      try {
        close()
        fs.renameSync(tmp, final)
      } catch (e) {
        this.abandon()
        throw writeFailure(final, e)
      }
      done = true
      releaseFile(tmp)
    },
    abandon() {
      if (done) return
      done = true
      try {
        close()
      } catch {
        // already closed by the writer
      }
      fs.rmSync(tmp, {force: true})
      releaseFile(tmp)
    },
  }
}

/**
 * Writes `data` to `final` through a temporary file: a reader sees the old file or the whole new
 * one, never a part, and a failure (a full disk) leaves no part behind.
 */
export function writeFileSafely(final: string, data: string | Uint8Array, mode?: number): void {
  const tmp = createTemporary(final, mode)
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    for (let at = 0; at < bytes.length; ) at += fs.writeSync(tmp.fd, bytes, at, bytes.length - at)
    tmp.commit()
  } catch (e) {
    tmp.abandon()
    throw writeFailure(final, e)
  }
}

// node:crypto only when a file is written: loading it costs every query about 4 ms of its start-up.
const randomHex = (): string => (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(8).toString('hex')

/** A failure to write `file`, in one line: the user's to act on (a full disk, a folder that is not there). */
export function writeFailure(file: string, e: unknown): TomaError {
  if (e instanceof TomaError) return e
  const err = e as NodeJS.ErrnoException
  return new TomaError(`${file}: cannot write: ${err.code ? `${describeCode(err.code)} (${err.code})` : err.message}`, EXIT_OUTPUT_FAILED)
}

const CODES: Record<string, string> = {
  ENOSPC: 'no space left on the disk',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such folder',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  EIO: 'input/output error',
}

/** An errno code in words, for a user's message. */
export function describeCode(code: string): string {
  return CODES[code] ?? code
}

const swept = new Set<string>()

/**
 * Removes, once per folder and process, the temporaries of toma processes that are gone (killed
 * before their watcher could act, or left by older versions): regular files only, of this user,
 * named as toma names them, whose process no longer exists.
 */
export function sweepStaleTemporaries(dir: string): void {
  if (swept.has(dir)) return
  swept.add(dir)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const pid = temporaryPid(name)
    if (pid === null || pid === process.pid || processExists(pid)) continue
    const file = path.join(dir, name)
    try {
      const stat = fs.lstatSync(file)
      if (!stat.isFile() || (process.geteuid && stat.uid !== process.geteuid())) continue
      fs.rmSync(file, {force: true})
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * Whether process `pid` has a temporary of `final` in its folder (a regular file named as
 * createTemporary names it): the file it is writing there now.
 */
export function hasTemporaryOf(final: string, pid: number): boolean {
  const dir = path.dirname(final)
  const prefix = `.${path.basename(final)}.toma-tmp-${pid}-`
  try {
    return fs.readdirSync(dir).some(name => name.startsWith(prefix) && TEMPORARY.test(name) && fs.lstatSync(path.join(dir, name)).isFile())
  } catch {
    return false
  }
}

/** The PID in a temporary's name, or null when the name is not a toma temporary's. */
export function temporaryPid(name: string): number | null {
  for (const re of [TEMPORARY, ...OLD_TEMPORARY]) {
    const m = re.exec(name)
    if (m) return Number(m[1])
  }
  return null
}

/** Whether process `pid` is running (another user's too). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, as another user's.
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
