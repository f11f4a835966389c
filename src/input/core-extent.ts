/**
 * How far a decompressed core can reach, read from its own ELF headers as the first bytes come
 * out of the decoder: a compressed file is untrusted, and a 68 KB `.zst` can expand to gigabytes
 * (a compression bomb). The output stops at the extent the headers give (the end of the last
 * segment, note or header table) plus a margin, and data that is not an ELF core at all stops
 * at its first bytes.
 */

/** Kept for the headers: program headers of a core lie right after its ELF header, within this. */
const HEAD_MAX = 16 * 2 ** 20
/** What a core may hold past its last header's extent (gdb pads nothing; this is slack). */
export const EXTENT_MARGIN = 2 ** 20
const PN_XNUM = 0xffff
const ELF_HEADER = 64
const PHDR_SIZE = 56
const SHDR_SIZE = 64

/** Data that ended the decompression on purpose: the core's extent is reached (the copy is whole). */
export class ExtentReached extends Error {
  constructor() {
    super('the core extent is reached')
  }
}

export class CoreExtent {
  private head = Buffer.alloc(0)
  /** Bytes allowed in all: Infinity until the headers are read (or when they cannot bound it). */
  limit = Infinity
  /** Bytes let through so far. */
  taken = 0
  /** Why the extent is unknown, when it is (a core of more than 65,534 segments). */
  unbounded: string | null = null
  private known = false

  /**
   * The part of `chunk` that lies within the core's extent (all of it until the extent is
   * known). Throws when the data is not a 64-bit little-endian ELF core, and ExtentReached after
   * the last byte allowed.
   */
  take(chunk: Uint8Array): Uint8Array {
    if (this.taken >= this.limit) throw new ExtentReached()
    if (!this.known) this.learn(chunk)
    const room = this.limit - this.taken
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.taken += part.length
    return part
  }

  private learn(chunk: Uint8Array): void {
    if (this.head.length < HEAD_MAX) this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_MAX - this.head.length)])
    const extent = coreExtent(this.head)
    if (extent === 'more') {
      if (this.head.length >= HEAD_MAX) throw new Error(`the decompressed data's program headers do not lie within its first ${HEAD_MAX / 2 ** 20} MiB: not a core toma reads`)
      return
    }
    this.known = true
    this.head = Buffer.alloc(0)
    if (typeof extent === 'string') {
      this.unbounded = extent
      return
    }
    this.limit = extent + EXTENT_MARGIN
  }
}

/**
 * The byte extent the headers at the start of a core give, 'more' when `head` is too short to
 * tell, or a string saying why it cannot be bounded. Throws when `head` is no 64-bit LE ELF core.
 */
export function coreExtent(head: Buffer): number | 'more' | string {
  if (head.length < ELF_HEADER) return 'more'
  if (head.readUInt32BE(0) !== 0x7f454c46) throw new Error('the decompressed data is not an ELF file')
  if (head[4] !== 2 || head[5] !== 1) throw new Error('the decompressed data is not a 64-bit little-endian ELF file')
  if (head.readUInt16LE(16) !== 4) throw new Error('the decompressed data is an ELF file, but not a core (e_type is not ET_CORE)')
  const phoff = safe(head.readBigUInt64LE(0x20), 'e_phoff')
  const shoff = safe(head.readBigUInt64LE(0x28), 'e_shoff')
  const phentsize = head.readUInt16LE(0x36)
  const phnum = head.readUInt16LE(0x38)
  const shnum = head.readUInt16LE(0x3c)
  if (phnum === PN_XNUM) return 'more than 65,534 program headers (PN_XNUM): their count lies in a section header at the end'
  if (phnum > 0 && phentsize !== PHDR_SIZE) throw new Error(`the decompressed core's program headers are ${phentsize} bytes, not ${PHDR_SIZE}`)
  const tableEnd = phoff + phnum * PHDR_SIZE
  if (tableEnd > HEAD_MAX) throw new Error(`the decompressed core's program headers lie at ${phoff}, past its first ${HEAD_MAX / 2 ** 20} MiB: not a core toma reads`)
  if (head.length < tableEnd) return 'more'
  let extent = Math.max(ELF_HEADER, tableEnd, shoff > 0 ? shoff + shnum * SHDR_SIZE : 0)
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * PHDR_SIZE
    const end = safe(head.readBigUInt64LE(at + 8), 'p_offset') + safe(head.readBigUInt64LE(at + 32), 'p_filesz')
    if (!Number.isSafeInteger(end)) throw new Error('the decompressed core has a segment past 2^53 bytes')
    extent = Math.max(extent, end)
  }
  return extent
}

function safe(v: bigint, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`the decompressed core's ${what} is 0x${v.toString(16)}, past any file`)
  return Number(v)
}
