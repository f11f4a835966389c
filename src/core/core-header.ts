import elfy from 'elfy'
import {TomaError} from '../errors.js'
import type {FileReader} from './file-reader.js'
import {u64le} from '../util/u64le.js'
import {ARCHITECTURES, architectureOf, type Architecture} from './arch.js'

// elfy's Parser names the machine of an ELF header (for the message of a foreign core). Program
// headers are read here: elfy wants them at their file offset in one buffer, and knows nothing
// of PN_XNUM.

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
const SHDR_SIZE = 64
/** e_phnum's escape: the real program header count is in section header 0's sh_info (big cores). */
export const PN_XNUM = 0xffff

const READ = ARCHITECTURES.map(a => a.name).join(' and ')

/** Reads and checks the ELF header and program headers of a core: ELF64, little-endian, x86-64 or aarch64, ET_CORE. */
export function readCoreHeader(file: FileReader, name: string): {arch: Architecture; programs: ProgramHeader[]} {
  if (file.size < EHDR_SIZE) throw new TomaError(`${name}: not an ELF file (${file.size} bytes, too short for an ELF header)`)
  const ident = file.read(0, EHDR_SIZE)
  if (ident.readUInt32BE(0) !== 0x7f454c46) throw new TomaError(`${name}: not an ELF file (bad magic)`)
  if (ident[4] !== 2) throw new TomaError(`${name}: a 32-bit ELF file; toma reads 64-bit ${READ} cores only`)
  if (ident[5] !== 1) throw new TomaError(`${name}: a big-endian ELF file; toma reads little-endian ${READ} cores only`)
  const parser = new elfy.Parser()
  const header = parser.parseHeader(ident)
  const machine = ident.readUInt16LE(18)
  const type = ident.readUInt16LE(16)
  if (type !== 4) {
    const kind = type === 2 ? 'an executable' : type === 3 ? 'a shared object or PIE executable' : type === 1 ? 'a relocatable object' : `type ${type}`
    throw new TomaError(`${name}: an ELF file but not a core dump (it is ${kind})`)
  }
  const arch = architectureOf(machine)
  if (!arch) throw new TomaError(`${name}: a core of machine ${header.machine ?? machine}; toma reads ${READ} cores only`)
  if (ident.readUInt16LE(54) !== PHDR_SIZE) throw new TomaError(`${name}: damaged ELF header (program header size ${ident.readUInt16LE(54)}, expected ${PHDR_SIZE})`)
  const phoff = u64le(ident, 32)
  const phnum = programHeaderCount(file, ident, name)
  if (phnum === 0) throw new TomaError(`${name}: core has no program headers; cannot read its segments`)
  // Checked against the file before anything is sized by it.
  const tableEnd = phoff + phnum * PHDR_SIZE
  if (tableEnd > file.size) throw new TomaError(`${name}: truncated core (program headers end at ${tableEnd}, file is ${file.size} bytes)`)
  const table = file.read(phoff, phnum * PHDR_SIZE)
  const programs: ProgramHeader[] = []
  for (let i = 0; i < phnum; i++) {
    const at = i * PHDR_SIZE
    programs.push({
      type: table.readUInt32LE(at),
      flags: table.readUInt32LE(at + 4),
      offset: u64le(table, at + 8),
      vaddr: u64le(table, at + 16),
      filesz: u64le(table, at + 32),
      memsz: u64le(table, at + 40),
    })
  }
  return {arch, programs}
}

/** e_phnum, or through PN_XNUM the count in section header 0's sh_info. */
function programHeaderCount(file: FileReader, ident: Buffer, name: string): number {
  const phnum = ident.readUInt16LE(56)
  if (phnum !== PN_XNUM) return phnum
  const shoff = u64le(ident, 40)
  const shentsize = ident.readUInt16LE(58)
  if (shoff === 0 || shentsize < SHDR_SIZE || shoff + SHDR_SIZE > file.size) {
    throw new TomaError(`${name}: damaged core: e_phnum is PN_XNUM but section header 0 (at ${shoff}, ${shentsize} bytes) is not in the file`)
  }
  return file.read(shoff, SHDR_SIZE).readUInt32LE(44)
}
