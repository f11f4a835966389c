import zlib from 'node:zlib'
import type {ElfFile} from '../elf-file.js'
import {SHT_NOBITS} from '../constants.js'
import {DwarfError} from './cursor.js'
import {u64le} from '../../util/u64le.js'

/** SHF_COMPRESSED: the section starts with an Elf64_Chdr. */
const SHF_COMPRESSED = 0x800
const ELFCOMPRESS_ZLIB = 1
/** No DWARF section is inflated past this (a damaged header must not ask for gigabytes). */
const MAX_INFLATED = 1 << 30

/** The sections the reader uses, by their DWARF name. Absent ones are empty buffers. */
export interface DwarfSections {
  info: Buffer
  abbrev: Buffer
  str: Buffer
  lineStr: Buffer
  strOffsets: Buffer
  addr: Buffer
  rnglists: Buffer
  ranges: Buffer
}

const NAMES: Record<keyof DwarfSections, string> = {
  info: 'debug_info', abbrev: 'debug_abbrev', str: 'debug_str', lineStr: 'debug_line_str',
  strOffsets: 'debug_str_offsets', addr: 'debug_addr', rnglists: 'debug_rnglists', ranges: 'debug_ranges',
}

/**
 * A file's DWARF sections, inflated when compressed (SHF_COMPRESSED with zlib, as `gcc
 * -gz` and Debian's debug files make them, or the older `.zdebug_*` sections). Null when the file
 * has no .debug_info. A compressed section this cannot inflate is a DwarfError.
 */
export function dwarfSections(file: ElfFile): DwarfSections | null {
  const out: Partial<DwarfSections> = {}
  for (const key of Object.keys(NAMES) as Array<keyof DwarfSections>) {
    out[key] = sectionBytes(file, NAMES[key])
  }
  return out.info!.length > 0 ? (out as DwarfSections) : null
}

/**
 * How long the file's .debug_info is, uncompressed, from its headers alone (a compressed section's
 * header says): 0 when it has none. Lets a caller refuse a large one before inflating it.
 */
export function debugInfoSize(file: ElfFile): number {
  const plain = file.section('.debug_info')
  if (plain && plain.type !== SHT_NOBITS) {
    if ((plain.flags & SHF_COMPRESSED) === 0) return plain.size
    const head = file.sectionData(plain).subarray(0, 24)
    return head.length === 24 ? u64le(head, 8) : 0
  }
  const legacy = file.section('.zdebug_info')
  if (legacy && legacy.type !== SHT_NOBITS) {
    const head = file.sectionData(legacy).subarray(0, 12)
    return head.length === 12 && head.toString('latin1', 0, 4) === 'ZLIB' ? Number(head.readBigUInt64BE(4)) : 0
  }
  return 0
}

function sectionBytes(file: ElfFile, name: string): Buffer {
  const plain = file.section(`.${name}`)
  if (plain && plain.type !== SHT_NOBITS) {
    const data = file.sectionData(plain)
    return (plain.flags & SHF_COMPRESSED) !== 0 ? inflateChdr(data, `${file.path} .${name}`) : data
  }
  const legacy = file.section(`.z${name}`)
  if (legacy && legacy.type !== SHT_NOBITS) return inflateZdebug(file.sectionData(legacy), `${file.path} .z${name}`)
  return Buffer.alloc(0)
}

/** An SHF_COMPRESSED section: Elf64_Chdr {type u32, reserved u32, size u64, addralign u64}, then the stream. */
function inflateChdr(data: Buffer, what: string): Buffer {
  if (data.length < 24) throw new DwarfError(`${what}: compressed section shorter than its header`)
  const type = data.readUInt32LE(0)
  if (type !== ELFCOMPRESS_ZLIB) throw new DwarfError(`${what}: compression type ${type} is not zlib`)
  return inflate(data.subarray(24), u64le(data, 8), what)
}

/** A `.zdebug_*` section: "ZLIB", the size as u64 big-endian, then the stream. */
function inflateZdebug(data: Buffer, what: string): Buffer {
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'ZLIB') throw new DwarfError(`${what}: no ZLIB header`)
  return inflate(data.subarray(12), Number(data.readBigUInt64BE(4)), what)
}

function inflate(stream: Buffer, size: number, what: string): Buffer {
  if (!(size >= 0 && size <= MAX_INFLATED)) throw new DwarfError(`${what}: claims ${size} bytes uncompressed`)
  let out: Buffer
  try {
    out = zlib.inflateSync(stream, {maxOutputLength: Math.max(1, size)})
  } catch (e) {
    throw new DwarfError(`${what}: does not inflate (${e instanceof Error ? e.message : String(e)})`)
  }
  if (out.length !== size) throw new DwarfError(`${what}: inflates to ${out.length} bytes, not the ${size} its header says`)
  return out
}
