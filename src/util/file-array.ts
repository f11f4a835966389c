import fs from 'node:fs'
import {awaitSignal} from './await-signal.js'

/**
 * A Uint32Array that lives in a file (written there by another thread, perhaps still being
 * written) instead of in memory: where it lies, and the word that says it is all there. Plain
 * data, so a worker thread can be handed it and read the file itself.
 */
export interface FileArray {
  path: string
  /** Where element 0 lies in the file. */
  byteOffset: number
  length: number
  /** Word 0 is 1 once the array is in the file, 2 if writing it failed (shared when another thread writes it). */
  written: Int32Array
}

/** A Uint32Array's place in a file being written, filled in pieces at any place before it is read (IndexWriter.reserve). */
export interface ReservedArray {
  /** Writes `piece` as elements [at, at + piece.length). */
  writeAt(at: number, piece: Uint32Array): void
  /** Every element is written: raises `file.written`. */
  done(): void
  /** Where it lies, for a reader (which waits for `done`). */
  file: FileArray
}

/** Elements read at once: 4 MiB. */
const CHUNK = 1 << 20

/**
 * Sequential reads of a Uint32Array held in memory or in a file, in chunks of a buffer of its own:
 * `load(i, end)` makes elements [i, min(end, i + chunk)) readable at `words[i - start]`.
 */
export class Uint32Reader {
  words: Uint32Array
  /** The element words[0] holds. */
  start = 0
  /** Elements before it are in `words`. */
  end = 0
  private fd: number | null = null

  /** `chunk`: elements a read brings at most (tests make it small); `into`: the memory reads go to (its length is the chunk). */
  constructor(private readonly source: Uint32Array | FileArray, chunk = CHUNK, into?: Uint32Array) {
    if (source instanceof Uint32Array) {
      this.words = source
      this.end = source.length
    } else this.words = into ?? new Uint32Array(Math.max(1, Math.min(chunk, source.length)))
  }

  load(i: number, end: number): void {
    const source = this.source
    if (source instanceof Uint32Array) return
    this.fd ??= openWritten(source)
    const n = Math.min(end, source.length, i + this.words.length) - i
    readElements(this.fd, source, i, this.words.subarray(0, n))
    this.start = i
    this.end = i + n
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }
}

/** The file holding `source`, opened for reading once the writer thread (perhaps still at it) is done with it. */
export function openWritten(source: FileArray): number {
  // This thread has nothing to do until then.
  awaitSignal(source.written, 0, 1)
  if (Atomics.load(source.written, 0) !== 1) throw new Error(`${source.path}: the array at ${source.byteOffset} could not be written`)
  return fs.openSync(source.path, 'r')
}

/**
 * Elements [first, first + into.length) of `source`, read from `fd` into `into`: words, or where
 * `into` has narrower elements (an array parked as words: parked-array.ts), elements of its size.
 */
export function readElements(fd: number, source: FileArray, first: number, into: Uint8Array | Uint16Array | Uint32Array): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength)
  for (let done = 0; done < bytes.length; ) {
    const got = fs.readSync(fd, bytes, done, bytes.length - done, source.byteOffset + first * into.BYTES_PER_ELEMENT + done)
    if (got === 0) throw new Error(`${source.path}: ends before its array at ${source.byteOffset} does`)
    done += got
  }
}

/** The whole array read into `into` (at least as long), once it is written. */
export function readFileArray(source: FileArray, into: Uint32Array): Uint32Array {
  const reader = new Uint32Reader(source, into.length, into)
  try {
    reader.load(0, source.length)
  } finally {
    reader.close()
  }
  return into.subarray(0, source.length)
}
