import fs from 'node:fs'

/** Pieces this size that are all zero are not written: the file keeps a hole there. */
const PIECE = 4096
const ZERO = Buffer.alloc(PIECE)

/**
 * Writes a stream of bytes to a new, empty file open as `fd` (its owner closes it), leaving holes
 * where whole aligned 4 KiB pieces are zero (most of a big core is zero pages), so the copy takes
 * the disk space of its data only. The file gets its full size at finish().
 */
export class SparseFileWriter {
  /** Bytes written so far (holes included): the offset of the next byte. */
  size = 0
  /** Bytes that went to the disk (holes excluded): what the copy costs in space. */
  dataBytes = 0

  constructor(private readonly fd: number) {}

  write(chunk: Uint8Array): void {
    const data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    let at = 0
    // Runs of non-zero pieces go out in one write; a piece is aligned on the file's offset.
    let runStart = -1
    while (at < data.length) {
      const end = Math.min(data.length, at + (PIECE - ((this.size + at) % PIECE)))
      const zero = data.compare(ZERO, 0, end - at, at, end) === 0
      if (!zero && runStart < 0) runStart = at
      if (zero && runStart >= 0) {
        this.writeRange(data, runStart, at)
        runStart = -1
      }
      at = end
    }
    if (runStart >= 0) this.writeRange(data, runStart, data.length)
    this.size += data.length
  }

  private writeRange(data: Buffer, from: number, to: number): void {
    let done = from
    while (done < to) done += fs.writeSync(this.fd, data, done, to - done, this.size + done)
    this.dataBytes += to - from
  }

  /** Sets the file's size (a trailing hole is written by no write). */
  finish(): void {
    fs.ftruncateSync(this.fd, this.size)
  }
}
