import fs from 'node:fs'
import {openWritten, readElements, type FileArray} from './file-array.js'

/** Elements a block holds: 64 KiB. */
const BLOCK_WORDS = 16_384

/**
 * Random reads of a Uint32Array held in memory or in a file (the index, where an analysis under a
 * memory limit has left it), the file's through a cache of blocks of its own, a fixed size
 * whatever the array's: `at(i)` is element i. Where the array is in memory, it is one block that
 * never misses. A miss reads the block from the file into the slot the clock hand finds
 * unreferenced since its last turn (the CLOCK approximation of least recently used).
 *
 * Why blocks: the walks that read the forward edges at random (shortest paths, the dominator
 * pass's DFS) read an object's targets together, and a heap's objects mostly point at objects
 * allocated near them, so a block read once serves many objects; a walk over a graph without
 * that locality costs a read of a block per object, and no more memory.
 */
export class Uint32Blocks {
  /** The block read last, and the elements it holds: [start, end). */
  private words: Uint32Array
  private start = 0
  private end: number
  private readonly file: FileArray | null
  private fd: number | null = null
  private readonly blockWords: number
  /** Per block of the array: the slot holding it, or −1. */
  private slotOfBlock: Int32Array
  /** Per slot: its block, or −1; and whether it was read since the hand last passed. */
  private blockInSlot: Int32Array
  private used: Uint8Array
  /** Per slot: its memory. */
  private views: Uint32Array[]
  private hand = 0
  /** Blocks read from the file. */
  reads = 0

  /** `cacheBytes`: what the blocks may hold together (at least one block); `blockWords`: elements a block (tests make it small). */
  constructor(source: Uint32Array | FileArray, cacheBytes: number, blockWords = BLOCK_WORDS) {
    this.blockWords = Math.max(1, Math.floor(blockWords))
    if (source instanceof Uint32Array) {
      this.file = null
      this.words = source
      this.end = source.length
      this.slotOfBlock = this.blockInSlot = new Int32Array(0)
      this.used = new Uint8Array(0)
      this.views = []
      return
    }
    this.file = source
    this.words = new Uint32Array(0)
    this.end = 0
    const blocks = Math.ceil(source.length / this.blockWords)
    const slotCount = Math.max(1, Math.min(blocks, Math.floor(cacheBytes / (4 * this.blockWords))))
    this.slotOfBlock = new Int32Array(blocks).fill(-1)
    this.blockInSlot = new Int32Array(slotCount).fill(-1)
    this.used = new Uint8Array(slotCount)
    const slots = new Uint32Array(slotCount * this.blockWords)
    this.views = Array.from({length: slotCount}, (_, k) => slots.subarray(k * this.blockWords, (k + 1) * this.blockWords))
  }

  /** Element i (i below the array's length). */
  at(i: number): number {
    // A hit on the block read last does not mark it used: it was marked when it became the last.
    if (i >= this.start && i < this.end) return this.words[i - this.start]!
    return this.miss(i)
  }

  private miss(i: number): number {
    const file = this.file
    if (!file || !(i >= 0 && i < file.length)) throw new RangeError(`element ${i} of an array of ${file ? file.length : this.end}`)
    const block = Math.floor(i / this.blockWords)
    let slot = this.slotOfBlock[block]!
    if (slot < 0) slot = this.read(file, block)
    this.used[slot] = 1
    this.start = block * this.blockWords
    this.end = Math.min(file.length, this.start + this.blockWords)
    this.words = this.views[slot]!
    return this.words[i - this.start]!
  }

  private read(file: FileArray, block: number): number {
    this.fd ??= openWritten(file)
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
    const n = Math.min(file.length, first + this.blockWords) - first
    readElements(this.fd, file, first, this.views[slot]!.subarray(0, n))
    this.reads++
    this.blockInSlot[slot] = block
    this.slotOfBlock[block] = slot
    return slot
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }
}
