import fs from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'
import {u64le} from '../util/u64le.js'

/** 64 KiB blocks: list walks touch scattered words; scans use readRange. */
const BLOCK_SIZE = 1 << 16
/** Bounds the cache at 64 MiB whatever the core's size (and the block size). */
const MAX_CACHED_BYTES = 1024 * BLOCK_SIZE

/**
 * Bytes to read in place of the file's own (a copy-on-write view: damaged copies of a core without
 * copying it), and optionally a shorter size (a cut file).
 */
export interface FileOverlay {
  size?: number
  patches: Array<{offset: number; bytes: Buffer}>
}

/**
 * Ranged reads of a (possibly multi-gigabyte) file through a small LRU cache of fixed blocks.
 * Never reads the whole file; every read is bounded by the file's size, and short reads (a file
 * cut while we read it) leave zeros that the caller never sees because it checks `size` first.
 */
export class FileReader {
  readonly size: number
  private readonly fd: number
  private readonly cache = new Map<number, Buffer>()
  /**
   * The blocks' memory: one allocation, as large as the cache can grow (its pages are resident
   * only once used), which malloc maps on its own (asking for huge pages, as toma runs). A 64 KiB
   * block allocated alone lay in malloc's heap, which kept the cache's 64 MiB resident through the
   * whole analysis after the cache was dropped; slabs of 1 MiB, mapped in 4 KiB pages, made the
   * heap model's phases about 60 ms slower at 24 M object slots (medians of six alternating runs).
   * The slab goes when the cache goes.
   */
  private slab: Buffer | null = null
  /** The blocks MAX_CACHED_BYTES holds, and the blocks the cache holds at most now. */
  private readonly maxBlocks: number
  private cacheBlocks: number
  /** Blocks cut from the slab so far (never more than the cache holds: evicted blocks are reused). */
  private carved = 0

  /**
   * `cacheBlocks`: blocks the cache holds at most (tests make it small, to evict); `blockSize`: the
   * bytes a miss reads (a power of two; reads as large go past the cache).
   */
  constructor(readonly path: string, readonly overlay?: FileOverlay, cacheBlocks?: number, private readonly blockSize = BLOCK_SIZE) {
    this.maxBlocks = Math.max(1, Math.floor(MAX_CACHED_BYTES / blockSize))
    this.cacheBlocks = cacheBlocks ?? this.maxBlocks
    this.fd = openRegularFile(path)
    const size = fs.fstatSync(this.fd).size
    this.size = overlay?.size === undefined ? size : Math.max(0, Math.min(size, overlay.size))
  }

  /** Lays the overlay's patches over `into[at, at+length)`, which holds file bytes from `offset`. */
  private patch(offset: number, length: number, into: Buffer, at: number): void {
    for (const p of this.overlay?.patches ?? []) {
      const from = Math.max(offset, p.offset)
      const to = Math.min(offset + length, p.offset + p.bytes.length, this.size)
      if (from < to) p.bytes.copy(into, at + (from - offset), from - p.offset, to - p.offset)
    }
  }

  close(): void {
    fs.closeSync(this.fd)
    this.dropCache()
  }

  /**
   * Frees the cached blocks (up to 64 MiB), e.g. once the walks over scattered words are done;
   * `maxBytes`: what the cache may hold from now on (a memory limit's share), at least one block.
   */
  dropCache(maxBytes?: number): void {
    if (maxBytes !== undefined) this.cacheBlocks = Math.max(1, Math.min(this.maxBlocks, Math.floor(maxBytes / this.blockSize)))
    this.cache.clear()
    this.slab = null
    this.carved = 0
    this.lastBlock = null
    this.lastIndex = -1
  }

  /** Copies file bytes [offset, offset+length) into `into` at `at`; the range must lie inside the file. */
  readInto(offset: number, length: number, into: Buffer, at = 0): void {
    if (length >= this.blockSize) {
      // Large reads (object scans, note segments) go straight to the file: caching them would only evict.
      let done = 0
      while (done < length) {
        const n = fs.readSync(this.fd, into, at + done, length - done, offset + done)
        if (n <= 0) break
        done += n
      }
      this.patch(offset, length, into, at)
      return
    }
    let pos = offset
    let out = at
    const end = offset + length
    while (pos < end) {
      const blockIndex = Math.floor(pos / this.blockSize)
      const block = this.latest(blockIndex)
      const inBlock = pos - blockIndex * this.blockSize
      const n = Math.min(end - pos, block.length - inBlock)
      if (n <= 0) break
      block.copy(into, out, inBlock, inBlock + n)
      pos += n
      out += n
    }
  }

  /**
   * The little-endian 64-bit word at a file offset, as a number (exact below 2^53), or undefined
   * when it crosses a block boundary (the caller then takes the general path). This is the hot
   * path of every list walk, so the last block is kept at hand without touching the LRU map.
   */
  word(offset: number): number | undefined {
    const index = Math.floor(offset / this.blockSize)
    const inBlock = offset - index * this.blockSize
    if (inBlock + 8 > this.blockSize) return undefined
    const block = this.latest(index)
    if (inBlock + 8 > block.length) return undefined
    return u64le(block, inBlock)
  }

  /**
   * Copies file bytes [offset, offset+length) into `into` at `at` from a cached block that holds
   * them, else with a read of their own that caches nothing (the range must lie inside the file).
   * For a few bytes in a block nothing else will read soon: the DWARF tier's check of each
   * std::string's terminating NUL, one byte in each of 600,000 scattered buffers on workloaddemo's
   * timing core, read a 64 KiB block for each and evicted the blocks the walk was reading.
   */
  peekInto(offset: number, length: number, into: Buffer, at = 0): void {
    const index = Math.floor(offset / this.blockSize)
    const inBlock = offset - index * this.blockSize
    const block = index === this.lastIndex ? this.lastBlock : this.cache.get(index)
    if (block && inBlock + length <= block.length) {
      block.copy(into, at, inBlock, inBlock + length)
      return
    }
    let done = 0
    while (done < length) {
      const n = fs.readSync(this.fd, into, at + done, length - done, offset + done)
      if (n <= 0) break
      done += n
    }
    if (done < length) into.fill(0, at + done, at + length)
    this.patch(offset, length, into, at)
  }

  private lastIndex = -1
  private lastBlock: Buffer | null = null

  /**
   * A block, the last one used kept at hand without touching the LRU map (it is the most recent
   * entry already): walks and record reads mostly stay in one block, and the map's reordering on
   * every hit took 150 ms of the model stage's span-record reads at 24 M object slots (a profile).
   */
  private latest(index: number): Buffer {
    if (index === this.lastIndex && this.lastBlock !== null) return this.lastBlock
    const block = this.block(index)
    this.lastIndex = index
    this.lastBlock = block
    return block
  }

  read(offset: number, length: number): Buffer {
    const buf = Buffer.alloc(length)
    this.readInto(offset, length, buf)
    return buf
  }

  /** A block's place in the slab (allocated on the first miss: room for the cache, or the file if smaller). */
  private newBlock(length: number): Buffer {
    this.slab ??= Buffer.allocUnsafeSlow(Math.min(this.cacheBlocks, Math.ceil(this.size / this.blockSize)) * this.blockSize)
    const at = this.carved++ * this.blockSize
    return this.slab.subarray(at, at + length)
  }

  private block(index: number): Buffer {
    const hit = this.cache.get(index)
    if (hit) {
      this.cache.delete(index)
      this.cache.set(index, hit)
      return hit
    }
    const start = index * this.blockSize
    const length = Math.max(0, Math.min(this.blockSize, this.size - start))
    // The evicted block's memory takes the new one (a list walk over a big core misses for most of
    // its blocks: a new buffer each time made garbage faster than the walk itself ran).
    let buf: Buffer
    if (this.cache.size >= this.cacheBlocks) {
      const oldest = this.cache.keys().next().value as number
      const evicted = this.cache.get(oldest)!
      this.cache.delete(oldest)
      if (evicted === this.lastBlock) {
        this.lastBlock = null
        this.lastIndex = -1
      }
      // Its place in the slab holds a whole block, whatever the evicted one's length.
      buf = Buffer.from(evicted.buffer, evicted.byteOffset, length)
    } else buf = this.newBlock(length)
    // Zeros where a short read (a file cut while read) leaves bytes unread, as Buffer.alloc gave.
    let done = 0
    while (done < length) {
      const n = fs.readSync(this.fd, buf, done, length - done, start + done)
      if (n <= 0) break
      done += n
    }
    if (done < length) buf.fill(0, done)
    this.patch(start, length, buf, 0)
    this.cache.set(index, buf)
    return buf
  }
}
