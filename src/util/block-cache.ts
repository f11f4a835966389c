import fs from 'node:fs'
import {openWritten, readElements, type FileArray} from './file-array.js'

/** Elements a block holds by default: 64 KiB of 4-byte elements. */
const BLOCK_WORDS = 16_384

/** The element arrays a cache of blocks may hold. */
export type BlockElements = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array

/** Where an array out of memory lies, as a cache of blocks reads it: elements [first, first + into.length) into `into`. */
export interface BlockSource<T extends BlockElements> {
  length: number
  /** Fresh memory for `count` elements. */
  make(count: number): T
  read(first: number, into: T): void
  close(): void
}

/**
 * Random reads of an array held in memory or out of it (a file: the index, where an analysis under
 * a memory limit has left it), the latter through a cache of blocks of its own, a fixed size
 * whatever the array's: `at(i)` is element i. Where the array is in memory, it is one block that
 * never misses. A miss reads the block into the slot the clock hand finds unreferenced since its
 * last turn (the CLOCK approximation of least recently used).
 *
 * Why blocks: the walks that read an array at random (the forward edges in the shortest paths
 * and the dominator pass's DFS, the dominator tree's columns in the holder walk) read neighbours
 * together, and a heap's objects mostly point at objects allocated near them, so a block read
 * once serves many objects; a walk without that locality costs a read of a block per object, and
 * no more memory.
 */
export class Blocks<T extends BlockElements> {
  /** The block read last, and the elements it holds: [start, end). */
  private words: T
  private start = 0
  private end: number
  private readonly source: BlockSource<T> | null
  private readonly blockWords: number
  /** Per block of the array: the slot holding it, or −1. */
  private slotOfBlock: Int32Array
  /** Per slot: its block, or −1; and whether it was read since the hand last passed. */
  private blockInSlot: Int32Array
  private used: Uint8Array
  /** Per slot: its memory. */
  private views: T[]
  private hand = 0
  /** Blocks read from the source. */
  reads = 0
  /** Elements the array holds. */
  readonly length: number

  /** `cacheBytes`: what the blocks may hold together (at least one block); `blockWords`: elements a block (tests make it small). */
  constructor(source: T | BlockSource<T>, cacheBytes: number, blockWords = BLOCK_WORDS) {
    this.blockWords = Math.max(1, Math.floor(blockWords))
    this.length = source.length
    if (ArrayBuffer.isView(source)) {
      this.source = null
      this.words = source
      this.end = source.length
      this.slotOfBlock = this.blockInSlot = new Int32Array(0)
      this.used = new Uint8Array(0)
      this.views = []
      return
    }
    this.source = source
    const blocks = Math.ceil(source.length / this.blockWords)
    const elementBytes = source.make(0).BYTES_PER_ELEMENT
    const slotCount = Math.max(1, Math.min(blocks, Math.floor(cacheBytes / (elementBytes * this.blockWords))))
    this.words = source.make(0)
    this.end = 0
    this.slotOfBlock = new Int32Array(blocks).fill(-1)
    this.blockInSlot = new Int32Array(slotCount).fill(-1)
    this.used = new Uint8Array(slotCount)
    const slots = source.make(slotCount * this.blockWords)
    this.views = Array.from({length: slotCount}, (_, k) => slots.subarray(k * this.blockWords, (k + 1) * this.blockWords) as T)
  }

  /** Element i (i below the array's length). */
  at(i: number): number {
    // A hit on the block read last does not mark it used: it was marked when it became the last.
    if (i >= this.start && i < this.end) return this.words[i - this.start]!
    return this.miss(i)
  }

  private miss(i: number): number {
    const source = this.source
    if (!source || !(i >= 0 && i < source.length)) throw new RangeError(`element ${i} of an array of ${source ? source.length : this.end}`)
    const block = Math.floor(i / this.blockWords)
    let slot = this.slotOfBlock[block]!
    if (slot < 0) slot = this.read(source, block)
    this.used[slot] = 1
    this.start = block * this.blockWords
    this.end = Math.min(source.length, this.start + this.blockWords)
    this.words = this.views[slot]!
    return this.words[i - this.start]!
  }

  private read(source: BlockSource<T>, block: number): number {
    const count = this.blockInSlot.length
    while (this.used[this.hand] === 1) {
      this.used[this.hand] = 0
      this.hand = (this.hand + 1) % count
    }
    const slot = this.hand
    this.hand = (this.hand + 1) % count
    const old = this.blockInSlot[slot]!
    if (old >= 0) this.slotOfBlock[old] = -1
    const first = block * this.blockWords
    const n = Math.min(source.length, first + this.blockWords) - first
    source.read(first, this.views[slot]!.subarray(0, n) as T)
    this.reads++
    this.blockInSlot[slot] = block
    this.slotOfBlock[block] = slot
    return slot
  }

  close(): void {
    this.source?.close()
  }
}

/** A Uint32Array in memory or in a file (FileArray: perhaps still being written by another thread), read through blocks. */
export class Uint32Blocks extends Blocks<Uint32Array> {
  constructor(source: Uint32Array | FileArray, cacheBytes: number, blockWords = BLOCK_WORDS) {
    super(source instanceof Uint32Array ? source : fileSource(source), cacheBytes, blockWords)
  }
}

/** A FileArray as a block source: its file opened at the first read, once the writer is done with it. */
function fileSource(file: FileArray): BlockSource<Uint32Array> {
  let fd: number | null = null
  return {
    length: file.length,
    make: count => new Uint32Array(count),
    read(first, into) {
      fd ??= openWritten(file)
      readElements(fd, file, first, into)
    },
    close() {
      if (fd !== null) fs.closeSync(fd)
      fd = null
    },
  }
}
