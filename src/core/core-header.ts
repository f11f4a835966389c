import {createRequire} from 'node:module'
import {TomaError} from '../errors.js'
import type {FileReader} from './file-reader.js'

const require = createRequire(import.meta.url)
// elfy is CommonJS; its Parser gives us the ELF and program headers from a buffer that holds only
// those headers (elfy.parse itself also wants section headers and the whole file).
const elfy = require('elfy') as {
  Parser: new () => {
    parseHeader(buf: Buffer): ElfyHeader
    parsePrograms(buf: Buffer, header: ElfyHeader): ElfyProgram[]
  }
}

interface ElfyHeader {
  class: string
  endian: string
  type: string
  machine: string
  phoff: number
  phentsize: number
  phnum: number
}
interface ElfyProgram {
  type: string | number
  offset: number
  vaddr: number
  filesz: number
  memsz: number
  flags: Record<string, boolean>
  align: number
}

export const PT_LOAD = 1
export const PT_NOTE = 4
export const PF_X = 1
export const PF_W = 2
export const PF_R = 4

export interface ProgramHeader {
  type: number
  flags: number
  offset: number
  vaddr: number
  filesz: number
  memsz: number
}

const EHDR_SIZE = 64
const PHDR_SIZE = 56
const MAX_PHNUM = 0xffff // e_phnum is 16 bits; PN_XNUM cores are not supported and say so

/** Reads and checks the ELF header and program headers of a core: ELF64, little-endian, x86-64, ET_CORE. */
export function readCoreHeader(file: FileReader, name: string): ProgramHeader[] {
  if (file.size < EHDR_SIZE) throw new TomaError(`${name}: not an ELF file (${file.size} bytes, too short for an ELF header)`)
  const ident = file.read(0, EHDR_SIZE)
  if (ident.readUInt32BE(0) !== 0x7f454c46) throw new TomaError(`${name}: not an ELF file (bad magic)`)
  if (ident[4] !== 2) throw new TomaError(`${name}: a 32-bit ELF file; toma reads 64-bit x86-64 cores only`)
  if (ident[5] !== 1) throw new TomaError(`${name}: a big-endian ELF file; toma reads little-endian x86-64 cores only`)
  const parser = new elfy.Parser()
  const header = parser.parseHeader(ident)
  const machine = ident.readUInt16LE(18)
  const type = ident.readUInt16LE(16)
  if (type !== 4) {
    const kind = type === 2 ? 'an executable' : type === 3 ? 'a shared object or PIE executable' : type === 1 ? 'a relocatable object' : `type ${type}`
    throw new TomaError(`${name}: an ELF file but not a core dump (it is ${kind})`)
  }
  if (machine !== 62) throw new TomaError(`${name}: a core of machine ${header.machine ?? machine}; toma reads x86-64 cores only`)
  if (header.phentsize !== PHDR_SIZE) throw new TomaError(`${name}: damaged ELF header (program header size ${header.phentsize}, expected ${PHDR_SIZE})`)
  if (header.phnum === 0 || header.phnum >= MAX_PHNUM) throw new TomaError(`${name}: core has ${header.phnum} program headers; cannot read its segments`)
  const tableEnd = header.phoff + header.phnum * PHDR_SIZE
  if (tableEnd > file.size) throw new TomaError(`${name}: truncated core (program headers end at ${tableEnd}, file is ${file.size} bytes)`)
  // elfy slices from absolute offsets, so hand it a buffer laid out like the file's first bytes.
  const headers = Buffer.alloc(tableEnd)
  ident.copy(headers, 0)
  file.readInto(header.phoff, header.phnum * PHDR_SIZE, headers, header.phoff)
  const programs = parser.parsePrograms(headers, header)
  return programs.map((p, i) => ({
    type: headers.readUInt32LE(header.phoff + i * PHDR_SIZE),
    flags: headers.readUInt32LE(header.phoff + i * PHDR_SIZE + 4),
    offset: p.offset,
    vaddr: p.vaddr,
    filesz: p.filesz,
    memsz: p.memsz,
  }))
}
