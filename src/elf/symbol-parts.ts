import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'
import {createRequire} from 'node:module'
import {TomaError} from '../errors.js'
import {ELF64_EHDR_SIZE, ELF64_PHDR_SIZE, ELF64_SHDR_SIZE, SHT_NOBITS, SHT_NOTE, SHT_STRTAB, SHT_SYMTAB} from './constants.js'
import {u64le} from '../util/u64le.js'

/** Sections kept: what symbol lookups, the build-id and the debuglink need. */
const KEPT_TYPES = new Set([SHT_SYMTAB, SHT_STRTAB, SHT_NOTE])

/** Most section headers accepted, and most bytes of kept sections read (a symbol table is far smaller). */
const MAX_SECTIONS = 1 << 16
const MAX_KEPT_BYTES = 1 << 30

/**
 * The parts of an ELF file that name its addresses, as a small ELF image of their own: the ELF
 * header, the section headers, and the bytes of the symbol tables, string tables and notes, read
 * by range. Separate debug files are mostly DWARF (hundreds of megabytes for a large program),
 * none of which symbols need. Every other section becomes SHT_NOBITS and program headers lose
 * their file bytes, so the image parses like the file it came from, minus the bytes not read.
 */
export function readSymbolParts(path: string): Buffer {
  let fd: number
  try {
    fd = openRegularFile(path)
  } catch (err) {
    if (err instanceof TomaError) throw err
    throw new TomaError(`cannot open ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message.split('\n')[0]}`)
  }
  try {
    const size = fstatSync(fd).size
    const read = (offset: number, length: number): Buffer => {
      if (offset < 0 || length < 0 || offset + length > size) throw new TomaError(`${path} is truncated: ${length} bytes at ${offset} lie past its end (${size} bytes)`)
      const out = Buffer.alloc(length)
      let done = 0
      while (done < length) {
        const n = readSync(fd, out, done, length - done, offset + done)
        if (n === 0) break
        done += n
      }
      return out
    }
    const header = read(0, Math.min(ELF64_EHDR_SIZE, size))
    if (header.length < ELF64_EHDR_SIZE || header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header[5] !== 1) {
      throw new TomaError(`${path} is not an ELF64 little-endian file`)
    }
    if (header.readUInt16LE(58) !== ELF64_SHDR_SIZE || (header.readUInt16LE(56) > 0 && header.readUInt16LE(54) !== ELF64_PHDR_SIZE)) {
      throw new TomaError(`${path} is damaged: unexpected program or section header size`)
    }
    const phoff = u64le(header, 32), phnum = header.readUInt16LE(56)
    const shoff = u64le(header, 40), shnum = header.readUInt16LE(60)
    if (shnum > MAX_SECTIONS) throw new TomaError(`${path} is damaged: ${shnum} section headers`)
    const phdrs = phnum > 0 ? read(phoff, phnum * ELF64_PHDR_SIZE) : Buffer.alloc(0)
    const shdrs = shnum > 0 ? read(shoff, shnum * ELF64_SHDR_SIZE) : Buffer.alloc(0)

    // layout of the image: header, program headers, section headers, kept sections' bytes
    const newPhoff = ELF64_EHDR_SIZE
    const newShoff = newPhoff + phdrs.length
    const parts: Buffer[] = []
    let at = newShoff + shdrs.length
    let kept = 0
    for (let i = 0; i < shnum; i++) {
      const h = i * ELF64_SHDR_SIZE
      const type = shdrs.readUInt32LE(h + 4)
      const offset = u64le(shdrs, h + 24), length = u64le(shdrs, h + 32)
      const keep = KEPT_TYPES.has(type) && length > 0
      if (!keep) {
        if (type !== SHT_NOBITS && i !== 0) shdrs.writeUInt32LE(SHT_NOBITS, h + 4)
        continue
      }
      kept += length
      if (kept > MAX_KEPT_BYTES) throw new TomaError(`${path}: symbol and string tables larger than ${MAX_KEPT_BYTES} bytes`)
      parts.push(read(offset, length))
      shdrs.writeBigUInt64LE(BigInt(at), h + 24)
      at += length
    }
    // .gnu_debuglink is PROGBITS: keep it too, found by name through the section-name table
    const names = shnum > 0 ? sectionNames(shdrs, parts, header.readUInt16LE(62), newShoff + shdrs.length) : []
    const link = names.indexOf('.gnu_debuglink')
    if (link > 0) {
      const h = link * ELF64_SHDR_SIZE
      const [offset, length] = [u64le(shdrs, h + 24), u64le(shdrs, h + 32)]
      if (length <= 4096) {
        shdrs.writeUInt32LE(1 /* SHT_PROGBITS */, h + 4)
        parts.push(read(offset, length))
        shdrs.writeBigUInt64LE(BigInt(at), h + 24)
        at += length
      }
    }
    for (let i = 0; i < phnum; i++) {
      phdrs.writeBigUInt64LE(0n, i * ELF64_PHDR_SIZE + 8) // p_offset
      phdrs.writeBigUInt64LE(0n, i * ELF64_PHDR_SIZE + 32) // p_filesz
    }
    const head = Buffer.from(header)
    head.writeBigUInt64LE(BigInt(phnum > 0 ? newPhoff : 0), 32)
    head.writeBigUInt64LE(BigInt(shnum > 0 ? newShoff : 0), 40)
    return Buffer.concat([head, phdrs, shdrs, ...parts])
  } finally {
    closeSync(fd)
  }
}

/**
 * Names of all sections, read from the section-name table already copied into `parts` (its
 * header in `shdrs` holds its new offset, relative to the image whose kept bytes start at `base`).
 */
function sectionNames(shdrs: Buffer, parts: Buffer[], shstrndx: number, base: number): string[] {
  if (shstrndx * ELF64_SHDR_SIZE >= shdrs.length) return []
  const table = Buffer.concat(parts)
  const start = u64le(shdrs, shstrndx * ELF64_SHDR_SIZE + 24) - base
  const length = u64le(shdrs, shstrndx * ELF64_SHDR_SIZE + 32)
  if (start < 0 || start + length > table.length) return []
  const strings = table.subarray(start, start + length)
  const out: string[] = []
  for (let i = 0; i * ELF64_SHDR_SIZE < shdrs.length; i++) {
    const nameOff = shdrs.readUInt32LE(i * ELF64_SHDR_SIZE)
    const end = strings.indexOf(0, nameOff)
    out.push(nameOff < strings.length ? strings.toString('latin1', nameOff, end < 0 ? strings.length : end) : '')
  }
  return out
}

/** CRC-32 of a whole file, read in chunks (what .gnu_debuglink records). */
export function fileCrc32(path: string): number {
  // node:zlib only here (a debuglink's check), not on every query's start.
  const zlib: typeof import('node:zlib') = createRequire(import.meta.url)('node:zlib')
  const fd = openRegularFile(path)
  try {
    const chunk = Buffer.alloc(1 << 20)
    let crc = 0
    for (let offset = 0; ; ) {
      const n = readSync(fd, chunk, 0, chunk.length, offset)
      if (n === 0) return crc
      crc = zlib.crc32(chunk.subarray(0, n), crc)
      offset += n
    }
  } finally {
    closeSync(fd)
  }
}
