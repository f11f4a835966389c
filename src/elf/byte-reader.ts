import {u64le} from '../util/u64le.js'
/**
 * Reads a little-endian buffer front to back, as DWARF's sections and the call-frame information
 * are laid out: fixed-size integers, LEB128, inline strings. Every read is checked against `end`:
 * the bytes come from a file and are untrusted, so a read past it is an error (of the caller's
 * kind, from `fail`), never a wrong value. 64-bit values are JS numbers: exact below 2^53, which
 * every address and offset is; larger ones are approximate (a length that large fails its check).
 */
export class ByteReader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    /** One past the last byte this reader may read (a unit's or an entry's end). */
    public end: number,
    private readonly fail: (message: string) => Error,
  ) {
    if (end > buf.length) throw fail(`ends at ${end}, past its ${buf.length} bytes`)
  }

  get atEnd(): boolean {
    return this.pos >= this.end
  }

  /** Moves past n bytes and returns where they start. */
  take(n: number): number {
    const at = this.pos
    if (!(n >= 0) || at + n > this.end) throw this.fail(`${n} bytes needed at offset ${at}, past the end (${this.end})`)
    this.pos = at + n
    return at
  }

  u8(): number {
    return this.buf[this.take(1)]!
  }
  u16(): number {
    return this.buf.readUInt16LE(this.take(2))
  }
  u32(): number {
    return this.buf.readUInt32LE(this.take(4))
  }
  i32(): number {
    return this.buf.readInt32LE(this.take(4))
  }
  u64(): number {
    const at = this.take(8)
    return u64le(this.buf, at)
  }
  i64(): number {
    return Number(this.buf.readBigInt64LE(this.take(8)))
  }
  uleb(): number {
    let result = 0
    let scale = 1
    for (let i = 0; i < 10; i++) {
      const b = this.u8()
      result += (b & 0x7f) * scale
      if ((b & 0x80) === 0) return result
      scale *= 128
    }
    throw this.fail(`LEB128 longer than 10 bytes at offset ${this.pos}`)
  }
  sleb(): number {
    let result = 0
    let scale = 1
    for (let i = 0; i < 10; i++) {
      const b = this.u8()
      result += (b & 0x7f) * scale
      scale *= 128
      if ((b & 0x80) === 0) return b & 0x40 ? result - scale : result
    }
    throw this.fail(`LEB128 longer than 10 bytes at offset ${this.pos}`)
  }
  bytes(n: number): Buffer {
    const at = this.take(n)
    return this.buf.subarray(at, at + n)
  }
  /** A NUL-terminated string before `end`. */
  cstring(encoding: BufferEncoding = 'latin1'): string {
    const nul = this.stringEnd()
    const s = this.buf.toString(encoding, this.pos, nul)
    this.pos = nul + 1
    return s
  }
  skipCString(): void {
    this.pos = this.stringEnd() + 1
  }
  private stringEnd(): number {
    const nul = this.buf.indexOf(0, this.pos)
    if (nul < 0 || nul >= this.end) throw this.fail(`unterminated string at offset ${this.pos}`)
    return nul
  }
}
