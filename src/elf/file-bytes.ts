import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'
import {TomaError} from '../errors.js'

/** Files up to this size are read whole at once: one read costs less than several. */
const WHOLE_FILE_MAX = 64 << 10
/** Reads are rounded out to this. */
const PAGE = 4096
/** Past this many separate reads, the next miss reads the rest of the file whole. */
const MAX_RANGE_READS = 64

/**
 * A file's bytes, read by range on first use into one buffer of the file's size. A query opens
 * every module file of a core to check its build-id (a few hundred bytes of headers and notes
 * each), and most never need more: reading whole files was most of a query's start (issue 13).
 * The buffer is zero-filled until a range is read; `range` reads what it returns first.
 */
export class FileBytes {
  private readonly loaded: Array<[start: number, end: number]> = []
  private whole: boolean

  private constructor(
    readonly path: string,
    /** As long as the file; only read ranges hold its bytes. */
    readonly buf: Buffer,
    whole: boolean,
  ) {
    this.whole = whole
  }

  /** Bytes already in memory (a whole file). */
  static of(buf: Buffer, path: string): FileBytes {
    return new FileBytes(path, buf, true)
  }

  /**
   * The file at `path`, its first `head.length` bytes given (read by the caller to refuse a core
   * before anything else). Files up to WHOLE_FILE_MAX bytes are read whole at once.
   */
  static open(path: string, head: Buffer, size: number): FileBytes {
    if (size <= WHOLE_FILE_MAX) {
      const file = new FileBytes(path, Buffer.alloc(size), false)
      file.read(0, size)
      file.whole = true
      return file
    }
    const file = new FileBytes(path, Buffer.alloc(size), false)
    head.copy(file.buf, 0, 0, Math.min(head.length, size))
    file.loaded.push([0, Math.min(head.length, size)])
    return file
  }

  /** Makes sure [offset, offset + length) (clipped to the file) is read; returns the whole buffer. */
  ensure(offset: number, length: number): Buffer {
    if (this.whole) return this.buf
    const first = Math.max(0, Math.min(offset, this.buf.length))
    const last = Math.max(first, Math.min(offset + length, this.buf.length))
    if (first === last || this.loaded.some(([a, b]) => a <= first && last <= b)) return this.buf
    // Whole pages: neighbouring small reads (a symbol's bytes, a string) then share one.
    const start = Math.floor(first / PAGE) * PAGE
    const end = Math.min(this.buf.length, Math.ceil(last / PAGE) * PAGE)
    if (this.loaded.length >= MAX_RANGE_READS) {
      this.read(0, this.buf.length)
      this.whole = true
      this.loaded.length = 0
    } else {
      this.read(start, end - start)
      this.loaded.push([start, end])
    }
    return this.buf
  }

  /** A view of [offset, offset + length) (clipped to the file), read first if it was not. */
  range(offset: number, length: number): Buffer {
    const end = Math.min(offset + length, this.buf.length)
    return this.ensure(offset, length).subarray(offset, Math.max(offset, end))
  }

  private read(offset: number, length: number): void {
    let fd: number
    try {
      fd = openRegularFile(this.path)
    } catch (err) {
      throw new TomaError(`cannot read ${this.path}: ${(err as Error).message.split('\n')[0]}`)
    }
    try {
      // A file that changed size since it was opened would give bytes of another file.
      if (fstatSync(fd).size !== this.buf.length) throw new TomaError(`${this.path} changed while toma was reading it`)
      let done = 0
      while (done < length) {
        const n = readSync(fd, this.buf, offset + done, length - done, offset + done)
        if (n === 0) throw new TomaError(`${this.path} changed while toma was reading it (it ends early)`)
        done += n
      }
    } finally {
      closeSync(fd)
    }
  }
}
