/** A zstd frame's magic number, and the skippable frames' (RFC 8878 3.1.1, 3.1.2: 0x184D2A50 to 0x184D2A5F). */
const FRAME_MAGIC = 0xfd2fb528
const SKIPPABLE_MAGIC = 0x184d2a50
const SKIPPABLE_MASK = 0xfffffff0
/** Dictionary_ID's bytes by Dictionary_ID_flag, Frame_Content_Size's by its flag (RFC 8878 3.1.1.1.1). */
const DICTIONARY_ID_BYTES = [0, 1, 2, 4]
const CONTENT_SIZE_BYTES = [0, 2, 4, 8]
const BLOCK_RLE = 1
const BLOCK_RESERVED = 3
const CHECKSUM_BYTES = 4

type Expecting = 'magic' | 'descriptor' | 'block header' | 'skippable size'
const HEADER_BYTES: Record<Expecting, number> = {magic: 4, descriptor: 1, 'block header': 3, 'skippable size': 4}

/**
 * Follows a zstd stream's frame and block headers as its bytes pass (RFC 8878 3.1), decoding
 * nothing: where each frame ends (`take`), and whether the input stopped where a frame stops
 * (`end`). Node's zstd decoder ends quietly on input cut inside a frame (Node 22.23: a cut core
 * came out as the bytes before the cut, and was taken for a truncated core); the system's zstd and
 * fzstd say so themselves.
 */
export class ZstdFrameWalk {
  /** Bytes passed in all. */
  private offset = 0
  /** Bytes to pass before the next header: a header's rest, a block's content, a checksum, a skippable frame. */
  private skip = 0
  private expecting: Expecting = 'magic'
  private readonly header = Buffer.alloc(4)
  private have = 0
  private checksum = false
  private frames = 0

  push(chunk: Uint8Array): void {
    for (let used = 0; used < chunk.length; ) used += this.take(chunk.subarray(used))
  }

  /**
   * Passes the bytes of `chunk` up to the end of the frame they are in (the rest are the next
   * frame's) and says how many it passed: Node's decoder drops what follows a frame's end in the
   * same write (decompress.ts), so each frame gets a decoder of its own.
   */
  take(chunk: Uint8Array): number {
    let i = 0
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i)
        this.skip -= n
        i += n
      } else {
        const n = Math.min(HEADER_BYTES[this.expecting] - this.have, chunk.length - i)
        this.header.set(chunk.subarray(i, i + n), this.have)
        this.have += n
        i += n
        if (this.have === HEADER_BYTES[this.expecting]) {
          this.have = 0
          this.headerRead(this.offset + i - HEADER_BYTES[this.expecting])
        }
      }
      if (this.betweenFrames) break
    }
    this.offset += i
    return i
  }

  /** Whether the bytes passed end where a frame ends. */
  get betweenFrames(): boolean {
    return this.expecting === 'magic' && this.have === 0 && this.skip === 0
  }

  /** Throws unless the bytes passed are whole frames, at least one of them a zstd frame. */
  end(): void {
    if (!this.betweenFrames) throw new Error(`zstd stream cut short: its ${this.offset} bytes end inside a frame`)
    if (this.frames === 0) throw new Error(`no zstd frame in ${this.offset} bytes`)
  }

  private headerRead(at: number): void {
    const h = this.header
    switch (this.expecting) {
      case 'magic': {
        const magic = h.readUInt32LE(0)
        if (magic === FRAME_MAGIC) this.expecting = 'descriptor'
        else if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) this.expecting = 'skippable size'
        else throw new Error(`not a zstd frame at byte ${at} (magic 0x${magic.toString(16)})`)
        return
      }
      case 'descriptor': {
        const d = h[0]!
        if (d & 0x08) throw new Error(`zstd frame header at byte ${at - 4}: its reserved bit is set`)
        const singleSegment = (d >> 5) & 1
        const contentSizeFlag = d >> 6
        this.checksum = ((d >> 2) & 1) === 1
        this.skip = (singleSegment ? 0 : 1) + DICTIONARY_ID_BYTES[d & 3]! + (contentSizeFlag === 0 ? singleSegment : CONTENT_SIZE_BYTES[contentSizeFlag]!)
        this.expecting = 'block header'
        return
      }
      case 'block header': {
        const v = h[0]! | (h[1]! << 8) | (h[2]! << 16)
        const type = (v >> 1) & 3
        if (type === BLOCK_RESERVED) throw new Error(`zstd block at byte ${at}: reserved block type`)
        this.skip = type === BLOCK_RLE ? 1 : v >>> 3
        if (v & 1) {
          this.skip += this.checksum ? CHECKSUM_BYTES : 0
          this.expecting = 'magic'
          this.frames++
        }
        return
      }
      case 'skippable size':
        this.skip = h.readUInt32LE(0)
        this.expecting = 'magic'
    }
  }
}
