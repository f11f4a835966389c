import fs from 'node:fs'
import {createTemporary, type TemporaryFile} from '../util/temporary-file.js'
import {openRegularFile} from '../util/regular-file.js'
import {TomaError} from '../errors.js'
import {isShared} from '../util/shared-arrays.js'
import type {FileArray, ReservedArray} from '../util/file-array.js'
import {Blocks, type BlockElements} from '../util/block-cache.js'
// A type only: the writer thread's module (and node:worker_threads) stays out of a query's start.
import type {BackgroundWrites} from './background-writes.js'
import {STAGE_NAMES, declaredTypes, type ArrayName, type ArrayNamesOf, type ArrayOf, type DeclaredArrays, type ElementType, type Stage} from './schema.js'
import {arrayTableProblem, declarationProblem, stagesProblem} from './schema-check.js'
import {u64le} from '../util/u64le.js'

export const INDEX_MAGIC = 'TOMAIDX\0'
const MAGIC = INDEX_MAGIC
/** Bump when what an index holds or how it is laid out changes: older indexes are then rebuilt. */
export const INDEX_FORMAT_VERSION = 12

type ArrayType = ElementType
type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array
const CTORS = {u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array} as const

interface ArrayEntry {
  type: ArrayType
  offset: number
  length: number
}

interface Header {
  formatVersion: number
  /** The analysis stages the index holds (schema.ts STAGES): the first ones, in order. */
  stages: Stage[]
  meta: unknown
  arrays: Record<string, ArrayEntry>
}

function typeOf(a: Typed): ArrayType {
  if (a instanceof Uint8Array) return 'u8'
  if (a instanceof Uint16Array) return 'u16'
  if (a instanceof Uint32Array) return 'u32'
  if (a instanceof Int32Array) return 'i32'
  return 'f64'
}

// Not `(n + 7) & ~7`: bitwise operators cut to 32 bits, and an index can pass 2 GiB.
const align8 = (n: number) => Math.ceil(n / 8) * 8

/** Headers larger than this are not toma's (a real one is a few hundred KiB at most). */
const MAX_HEADER_BYTES = 256 * 1024 * 1024

/**
 * An index file that is cut, damaged or not toma's: one clear line, and a query given a core
 * analyses it again instead.
 */
export class DamagedIndexError extends TomaError {
  constructor(readonly path: string, readonly problem: string) {
    super(`${path}: damaged toma index (${problem}); run toma analyze on its core again`)
  }
}

/** Why a parsed header does not describe arrays that lie within a file of fileSize bytes, or null. */
function headerProblem(header: unknown, dataStart: number, fileSize: number): string | null {
  if (typeof header !== 'object' || header === null) return 'header is not an object'
  const arrays = (header as {arrays?: unknown}).arrays
  if (typeof arrays !== 'object' || arrays === null || Array.isArray(arrays)) return 'no array table'
  for (const [name, e] of Object.entries(arrays as Record<string, unknown>)) {
    const {type, offset, length} = (e ?? {}) as Partial<ArrayEntry>
    if (typeof type !== 'string' || !Object.hasOwn(CTORS, type)) return `array ${name} has an unknown type`
    if (!Number.isSafeInteger(offset) || offset! < 0 || offset! % 8 !== 0) return `array ${name} has a bad offset`
    if (!Number.isSafeInteger(length) || length! < 0) return `array ${name} has a bad length`
    if (dataStart + offset! + length! * CTORS[type].BYTES_PER_ELEMENT > fileSize) return `array ${name} runs past the end of the file`
  }
  return null
}

/** Bytes before the first array: magic, format version, header length, header offset (two u32). */
const PREAMBLE = 24
/** Elements addWidened widens at a time (512 KiB of f64: the piece lingers until the next collection). */
const WIDENED_PIECE = 2 ** 16

/**
 * Writes an index: named typed arrays, 8-byte aligned, then a small JSON header (format version,
 * the core's identity, summaries, the array table) at the end, found through the preamble, so a
 * query can read just the ranges it needs. Arrays are written as soon as the analysis has them
 * (`add`), so it can drop those it no longer needs before the next phase grows; the header goes
 * last (`finish`). Written to a temporary file and renamed, so a crash never leaves a half index.
 */
export class IndexWriter {
  private readonly entries: Record<string, ArrayEntry> = {}
  /** Arrays whose place is kept (keepPlace) and not yet written there. */
  private readonly kept = new Set<string>()
  private readonly tmp: TemporaryFile
  private fd: number | null
  private offset = 0
  /** Renamed into place: nothing left to abandon. */
  private finished = false

  /** `background`: a writer thread for `addBehind` (the caller ends it after `finish` or `abandon`). */
  constructor(
    readonly path: string,
    private readonly background: BackgroundWrites | null = null,
  ) {
    this.tmp = createTemporary(path)
    this.fd = this.tmp.fd
  }

  add<N extends ArrayName>(name: N, a: ArrayOf<N>): void {
    this.writePieces(name, [a as Typed])
  }

  /**
   * One array given as consecutive pieces of one type (blocks the analysis collected it in), so it
   * reaches the index without first being copied into one array.
   */
  addPieces<N extends ArrayName>(name: N, pieces: readonly ArrayOf<N>[]): void {
    this.writePieces(name, pieces as readonly Typed[])
  }

  private writePieces(name: string, pieces: readonly Typed[]): void {
    const place = this.placeFor(name, pieces[0]!, pieces.reduce((sum, p) => sum + p.length, 0))
    if (pieces.some(p => typeOf(p) !== place.type)) throw new Error(`index array ${name}: pieces of different types`)
    let at = place.offset
    for (const p of pieces) {
      this.written(() => writeAll(this.fd!, Buffer.from(p.buffer, p.byteOffset, p.byteLength), PREAMBLE + at))
      at += p.byteLength
    }
  }

  /**
   * Where array `name` (`length` elements of `a`'s type) goes: the place kept for it, or the end
   * of the arrays so far, taken now.
   */
  private placeFor(name: string, a: Typed, length: number): ArrayEntry {
    if (this.kept.has(name)) {
      const entry = this.entries[name]!
      if (this.fd === null) throw new Error('index already finished')
      if (typeOf(a) !== entry.type || length !== entry.length) throw new Error(`index array ${name}: ${length} elements of ${typeOf(a)} where ${entry.length} of ${entry.type} were kept a place`)
      this.kept.delete(name)
      return entry
    }
    const entry: ArrayEntry = {type: this.checked(name, a), offset: this.offset, length}
    this.entries[name] = entry
    this.offset = align8(this.offset + length * CTORS[entry.type].BYTES_PER_ELEMENT)
    return entry
  }

  /**
   * Keeps the place where `add` would write array `name` now (`length` elements of `type`), for
   * the array to be added later (add or addBehind write it there): arrays that are final in
   * another order than the index's (under a memory limit, the retained object counts come before
   * the bytes, which lie before them) still lie where they would have, so the file is the same
   * byte for byte.
   */
  keepPlace(name: ArrayName, type: ArrayType, length: number): void {
    this.placeFor(name, new CTORS[type](0), length)
    this.kept.add(name)
  }

  /**
   * f64 array `name` from whole numbers kept in 4 bytes (retained bytes summed under a memory
   * limit, where they fit): widened a piece at a time, never whole in memory as f64.
   */
  addWidened(name: ArrayNamesOf<'f64'>, values: Uint32Array): void {
    const place = this.placeFor(name, new Float64Array(0), values.length)
    const piece = new Float64Array(Math.min(values.length, WIDENED_PIECE))
    for (let at = 0; at < values.length; at += piece.length) {
      const part = piece.subarray(0, Math.min(piece.length, values.length - at))
      part.set(values.subarray(at, at + part.length))
      this.written(() => writeAll(this.fd!, Buffer.from(part.buffer, part.byteOffset, part.byteLength), PREAMBLE + place.offset + 8 * at))
    }
  }

  /** Arrays by name, in the object's order (a name the schema does not declare is a compile error). */
  addAll<A extends Record<keyof A, Typed>>(arrays: A & DeclaredArrays<A>): void {
    for (const [name, a] of Object.entries(arrays) as Array<[string, Typed]>) this.writePieces(name, [a])
  }

  /** addBehind for each of `arrays`, in the object's order. */
  addAllBehind<A extends Record<keyof A, Typed>>(arrays: A & DeclaredArrays<A>): void {
    for (const [name, a] of Object.entries(arrays) as Array<[string, Typed]>) this.writeBehind(name, a)
  }

  /**
   * The element type of array `name`, added next: refused when the index is finished, the array
   * added already, or the schema (schema.ts) does not declare it with this type. The types say so
   * to the compiler; this says so to a caller whose names or arrays are not typed to the schema.
   */
  private checked(name: string, a: Typed): ArrayType {
    if (this.fd === null) throw new Error('index already finished')
    if (name in this.entries) throw new Error(`index array ${name} written twice`)
    const type = typeOf(a)
    const problem = declarationProblem(name, type)
    if (problem) throw new Error(`index writer: ${problem}`)
    return type
  }

  /**
   * Like `add`, but written by the writer thread when there is one and `a` is shared: the caller
   * goes on at once with its next phase, and must not change `a` afterwards, nor let anyone
   * change it before `written` (word 0 set to 1 once it is written, here or there) says so.
   */
  addBehind<N extends ArrayName>(name: N, a: ArrayOf<N>, written?: Int32Array): void {
    this.writeBehind(name, a as Typed, written)
  }

  private writeBehind(name: string, a: Typed, written?: Int32Array): void {
    if (!this.background || !isShared(a)) {
      this.writePieces(name, [a])
      if (written) Atomics.store(written, 0, 1)
      return
    }
    const place = this.placeFor(name, a, a.length)
    this.background.write(this.fd!, a, PREAMBLE + place.offset, written)
  }

  /** Waits until `written`, handed to addBehind, is raised (at once where nothing is written behind). */
  awaitWritten(written: Int32Array): void {
    if (this.background) this.background.awaitWritten(written)
  }

  /**
   * Where array `name`, added already, lies in the file being written: for a thread that reads it
   * back before the index is finished (`written` raised once it is all there, as addBehind's).
   */
  fileArray(name: ArrayNamesOf<'u32'>, written: Int32Array): FileArray {
    const entry = this.entries[name]
    if (!entry || entry.type !== 'u32') throw new Error(`index array ${name}: not a u32 array added`)
    return {path: this.tmp.path, byteOffset: PREAMBLE + entry.offset, length: entry.length, written}
  }

  /**
   * Room for u32 array `name` of `length` elements where `add` would write it now, filled later
   * piece by piece at any place: an array built in passes (the reverse edges under a memory
   * limit, reverse-passes.ts) reaches the index without ever being whole in memory, and lies
   * where it would have, so the file is the same byte for byte.
   */
  reserve(name: ArrayNamesOf<'u32'>, length: number): ReservedArray {
    const entry = this.placeFor(name, new Uint32Array(0), length)
    const written = new Int32Array(new SharedArrayBuffer(4))
    return {
      writeAt: (at: number, piece: Uint32Array) => {
        if (this.fd === null) throw new Error(`index array ${name}: written after the index was finished`)
        if (!(Number.isSafeInteger(at) && at >= 0 && at + piece.length <= length)) throw new RangeError(`index array ${name}: piece at ${at} (${piece.length} elements) outside its ${length}`)
        this.written(() => writeAll(this.fd!, Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength), PREAMBLE + entry.offset + 4 * at))
      },
      done: () => Atomics.store(written, 0, 1),
      file: {path: this.tmp.path, byteOffset: PREAMBLE + entry.offset, length, written},
    }
  }

  /** Writes the header and renames the file into place; `stages`: the analysis stages its arrays are of. */
  finish(meta: unknown, stages: readonly Stage[] = STAGE_NAMES): void {
    this.writeHeader(meta, stages)
    this.fd = null
    this.tmp.commit()
    this.finished = true
  }

  /**
   * The index so far, opened for reading as a query would (its header written where `finish`
   * would write it): for a phase that reads the index it follows (the holder walk). The caller
   * closes it before adding more: arrays added after it go over that header, and `finish` writes
   * the last one after them.
   */
  readSoFar(meta: unknown, stages: readonly Stage[] = STAGE_NAMES): IndexFile {
    this.writeHeader(meta, stages)
    const file = IndexFile.open(this.tmp.path)
    if (!file) throw new Error('index so far: not of this format version')
    return file
  }

  /** Writes the header after the arrays so far and the preamble that finds it; the file ends with it. */
  private writeHeader(meta: unknown, stages: readonly Stage[]): void {
    if (this.fd === null) throw new Error('index already finished')
    if (this.kept.size > 0) throw new Error(`index arrays ${[...this.kept].join(', ')}: a place kept, never written`)
    const fd = this.fd
    try {
      this.written(() => this.background?.drain())
      const header: Header = {formatVersion: INDEX_FORMAT_VERSION, stages: [...stages], meta, arrays: this.entries}
      const json = Buffer.from(JSON.stringify(header), 'utf8')
      const at = PREAMBLE + this.offset
      this.written(() => writeAll(fd, json, at))
      const pre = Buffer.alloc(PREAMBLE)
      pre.write(MAGIC, 0, 'latin1')
      pre.writeUInt32LE(INDEX_FORMAT_VERSION, 8)
      pre.writeUInt32LE(json.length, 12)
      pre.writeUInt32LE(at % 2 ** 32, 16)
      pre.writeUInt32LE(Math.floor(at / 2 ** 32), 20)
      this.written(() => writeAll(fd, pre, 0))
      fs.ftruncateSync(fd, at + json.length)
    } catch (e) {
      this.abandon()
      throw e
    }
  }

  /** Runs a write; its failure (a full disk) is the user's to act on, said in one line. */
  private written(write: () => void): void {
    try {
      write()
    } catch (e) {
      throw this.cannotWrite(e instanceof Error ? e.message : String(e))
    }
  }

  private cannotWrite(why: string): TomaError {
    return new TomaError(`${this.path}: cannot write the index: ${why}`)
  }

  /**
   * Why a write on the writer thread has failed, if one has by now: what a phase that failed
   * after it (one reading the index back) reports instead of its own error.
   */
  writeFailure(): TomaError | null {
    const failure = this.background?.failure() ?? null
    return failure === null ? null : this.cannotWrite(failure)
  }

  /** Drops the half-written file (an analysis that failed). */
  abandon(): void {
    if (this.finished) return
    if (this.fd !== null) {
      try {
        this.background?.drain() // before the file is closed under the writer thread
      } catch {
        // the analysis failed already; the file goes
      }
      this.fd = null
    }
    this.tmp.abandon()
  }
}

/** Large buffers go out in pieces: writeSync of >2 GiB at once is not portable. */
function writeAll(fd: number, bytes: Buffer, position: number): void {
  const CHUNK = 1 << 28
  for (let at = 0; at < bytes.length; at += CHUNK) fs.writeSync(fd, bytes, at, Math.min(CHUNK, bytes.length - at), position + at)
}

/** Writes a whole index at once. */
export function writeIndex<A extends Record<keyof A, Typed>>(path: string, meta: unknown, arrays: A & DeclaredArrays<A>, stages: readonly Stage[] = STAGE_NAMES): void {
  const w = new IndexWriter(path)
  try {
    w.addAll(arrays)
    w.finish(meta, stages)
  } catch (e) {
    w.abandon()
    throw e
  }
}

/** An index file opened for reading: the header at once, arrays on demand (whole or a range). */
export class IndexFile {
  readonly meta: unknown
  /** The analysis stages the index holds (checked at open). */
  readonly stages: readonly Stage[]
  private readonly arrays: Record<string, ArrayEntry>
  private readonly dataStart: number
  private readonly fd: number

  private constructor(readonly path: string, fd: number, header: Header, dataStart: number) {
    this.fd = fd
    this.meta = header.meta
    this.stages = header.stages
    this.arrays = header.arrays
    this.dataStart = dataStart
  }

  /**
   * Opens an index; returns null when it is from another format version (the caller rebuilds it).
   * The header is checked against the file: every array must lie within it.
   */
  static open(path: string): IndexFile | null {
    let fd: number
    try {
      fd = openRegularFile(path)
    } catch (e) {
      if (e instanceof TomaError) throw e
      throw new TomaError(`${path}: cannot open index (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
    }
    try {
      const size = fs.fstatSync(fd).size
      const pre = Buffer.alloc(PREAMBLE)
      if (fs.readSync(fd, pre, 0, 16, 0) !== 16 || pre.toString('latin1', 0, 8) !== MAGIC) throw new TomaError(`${path}: not a toma index`)
      if (pre.readUInt32LE(8) !== INDEX_FORMAT_VERSION) {
        fs.closeSync(fd)
        return null
      }
      if (fs.readSync(fd, pre, 16, PREAMBLE - 16, 16) !== PREAMBLE - 16) throw new DamagedIndexError(path, 'the file is shorter than its header')
      const length = pre.readUInt32LE(12)
      const at = u64le(pre, 16)
      if (length > MAX_HEADER_BYTES || at < PREAMBLE || at + length > size) throw new DamagedIndexError(path, 'the file is shorter than its header')
      const json = Buffer.alloc(length)
      if (fs.readSync(fd, json, 0, length, at) !== length) throw new DamagedIndexError(path, 'the file is shorter than its header')
      let header: Header
      try {
        header = JSON.parse(json.toString('utf8')) as Header
      } catch {
        throw new DamagedIndexError(path, 'the header is not JSON')
      }
      const dataStart = PREAMBLE
      const problem = headerProblem(header, dataStart, at) ?? stagesProblem(header.stages) ?? arrayTableProblem(header.arrays, header.stages)
      if (problem) throw new DamagedIndexError(path, problem)
      return new IndexFile(path, fd, header, dataStart)
    } catch (e) {
      fs.closeSync(fd)
      throw e
    }
  }

  close(): void {
    fs.closeSync(this.fd)
  }

  has(name: ArrayName): boolean {
    return Object.hasOwn(this.arrays, name)
  }

  /** The arrays' names, in the order they lie in the file (open checked each against the schema). */
  names(): ArrayName[] {
    return Object.keys(this.arrays) as ArrayName[]
  }

  length(name: ArrayName): number {
    return this.entry(name).length
  }

  /** The whole array. */
  array<N extends ArrayName>(name: N): ArrayOf<N> {
    const e = this.entry(name)
    return this.slice(name, 0, e.length)
  }

  /** Elements [from, from+count) of an array, read with one ranged read. */
  slice<N extends ArrayName>(name: N, from: number, count: number): ArrayOf<N> {
    const e = this.entry(name)
    const out = new CTORS[e.type](Math.max(0, Math.min(count, e.length - from))) as ArrayOf<N>
    this.readInto(name, from, out)
    return out
  }

  /** Elements [from, from + into.length) of an array into `into` (of the array's type, within its length). */
  readInto<N extends ArrayName>(name: N, from: number, into: ArrayOf<N>): void {
    const e = this.entry(name)
    const Ctor = CTORS[e.type]
    if (!(into instanceof Ctor) || (into.length > 0 && !(from >= 0 && from + into.length <= e.length))) throw new RangeError(`index array ${name}: elements ${from} to ${from + into.length} of ${e.length}`)
    const bytes = Buffer.from(into.buffer, into.byteOffset, into.byteLength)
    const CHUNK = 1 << 28
    const base = this.dataStart + e.offset + from * Ctor.BYTES_PER_ELEMENT
    for (let at = 0; at < bytes.length; at += CHUNK) {
      const want = Math.min(CHUNK, bytes.length - at)
      if (fs.readSync(this.fd, bytes, at, want, base + at) !== want) throw new TomaError(`${this.path}: truncated toma index`)
    }
  }

  /** A reader of an array's elements at random through a cache of blocks of `cacheBytes` (block-cache.ts; `blockWords`: elements a block). */
  blocks<N extends ArrayName>(name: N, cacheBytes: number, blockWords?: number): Blocks<ArrayOf<N> & BlockElements> {
    const e = this.entry(name)
    const Ctor = CTORS[e.type]
    return new Blocks<ArrayOf<N> & BlockElements>({length: e.length, make: count => new Ctor(count) as ArrayOf<N> & BlockElements, read: (first, into) => this.readInto(name, first, into as unknown as ArrayOf<N>), close: () => {}}, cacheBytes, blockWords)
  }

  /**
   * The table's entry (checked against the schema at open). A name the schema does not declare is
   * the caller's mistake (a name not typed to the schema), not the file's.
   */
  private entry(name: string): ArrayEntry {
    if (!declaredTypes(name)) throw new Error(`index reader: array ${name} is not one the index schema declares`)
    const e = Object.hasOwn(this.arrays, name) ? this.arrays[name] : undefined
    if (!e) throw new TomaError(`${this.path}: index has no ${name} (re-run toma analyze)`)
    return e
  }
}
