import {ByteReader} from '../byte-reader.js'

/** A DWARF section or unit that does not parse: the whole file's DWARF is then left out. */
export class DwarfError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DwarfError'
  }
}

/** A reader over a DWARF section or unit whose every misread is a DwarfError naming `what`. */
export class Cursor extends ByteReader {
  constructor(buf: Buffer, pos: number, end: number = buf.length, readonly what = 'section') {
    super(buf, pos, end, message => new DwarfError(`${what}: ${message}`))
  }

  /** An unsigned value of `size` bytes (1, 2, 4 or 8). */
  sized(size: number): number {
    switch (size) {
      case 1: return this.u8()
      case 2: return this.u16()
      case 4: return this.u32()
      case 8: return this.u64()
      default: throw new DwarfError(`${this.what}: unsupported field size ${size}`)
    }
  }
}

/** The NUL-terminated string at `offset` of a string section, or a DwarfError. */
export function stringAt(section: Buffer, offset: number, what: string): string {
  if (!(offset >= 0 && offset < section.length)) throw new DwarfError(`${what}: string offset ${offset} is past its ${section.length} bytes`)
  const nul = section.indexOf(0, offset)
  if (nul < 0) throw new DwarfError(`${what}: unterminated string at offset ${offset}`)
  return section.toString('utf8', offset, nul)
}
