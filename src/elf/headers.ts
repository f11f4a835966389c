import elfy from 'elfy'
import {TomaError} from '../errors.js'
import {hex} from '../errors.js'
import {
  ELF64_EHDR_SIZE, ELF64_PHDR_SIZE, ELF64_SHDR_SIZE, SHT_NOBITS,
} from './constants.js'
import {u64le} from '../util/u64le.js'
import {ARCHITECTURES, architectureOf} from '../core/arch.js'

/** A program header, with numeric type and flags (PT_*, PF_*). */
export interface ElfSegment { type: number; flags: number; offset: number; vaddr: number; filesz: number; memsz: number; align: number }

/**
 * A section header, with numeric type and flags (SHT_*, SHF_*). `link`, `info` and `entsize` are
 * extra to the agreed shape: symbol tables and relocations need `link`.
 */
export interface ElfSection { name: string; type: number; flags: number; addr: number; offset: number; size: number; link: number; info: number; entsize: number }

export interface ElfHeaders {
  type: number
  /** e_machine: one of core/arch.ts's architectures. */
  machine: number
  entry: number
  segments: ElfSegment[]
  sections: ElfSection[]
}

/**
 * Parses the ELF header, program headers and section headers of a whole module file.
 *
 * elfy does the header walk, but three of its habits are worked around here (elfy 1.0.0):
 * - it turns p_type, sh_type, e_type and the flag words into strings or flag objects, and an
 *   unknown p_type (PT_GNU_PROPERTY, for one) becomes `undefined`, so the numeric type and flag
 *   words are read from the raw header bytes instead;
 * - its 64-bit sh_addralign/sh_entsize come from offsets 46/54 instead of 48/56, so entsize is
 *   read by hand too;
 * - `elfy.parse` asserts that section `e_shstrndx` is a string table and throws a TypeError when a
 *   file has no section headers, so we call its Parser's steps ourselves and resolve names here.
 * It also slices NOBITS sections' "data" out of the file bytes; we never use elfy's `data`.
 *
 * Every check that elfy would fail obscurely is done first, so the user gets one clear line.
 */
export function parseHeaders(buf: Buffer, path: string): ElfHeaders {
  if (buf.length < 4 || buf.readUInt32BE(0) !== 0x7f454c46) {
    throw new TomaError(`${path} is not an ELF file`)
  }
  if (buf.length < ELF64_EHDR_SIZE) {
    throw new TomaError(`${path} is truncated: ${buf.length} bytes, shorter than an ELF header`)
  }
  const klass = buf[4], data = buf[5], machine = buf.readUInt16LE(18)
  if (klass !== 2 || data !== 1 || !architectureOf(machine)) {
    const what = `${klass === 1 ? '32-bit' : klass === 2 ? '64-bit' : 'unknown-class'} ` +
      `${data === 1 ? 'little-endian' : data === 2 ? 'big-endian' : 'unknown-endian'} machine ${machine}`
    throw new TomaError(`${path} is a ${what} ELF file; toma reads only ELF64 little-endian ${ARCHITECTURES.map(a => a.name).join(' and ')}`)
  }
  const type = buf.readUInt16LE(16)
  const phoff = u64le(buf, 32), shoff = u64le(buf, 40)
  const phentsize = buf.readUInt16LE(54), phnum = buf.readUInt16LE(56)
  const shentsize = buf.readUInt16LE(58), shnum = buf.readUInt16LE(60)
  if (phnum > 0 && phentsize < ELF64_PHDR_SIZE) {
    throw new TomaError(`${path} is damaged: program header size ${phentsize}, expected ${ELF64_PHDR_SIZE}`)
  }
  if (shnum > 0 && shentsize < ELF64_SHDR_SIZE) {
    throw new TomaError(`${path} is damaged: section header size ${shentsize}, expected ${ELF64_SHDR_SIZE}`)
  }
  if (phnum > 0 && phoff + phnum * phentsize > buf.length) {
    throw new TomaError(`${path} is truncated: program headers end at ${hex(phoff + phnum * phentsize)}, file has ${buf.length} bytes`)
  }
  if (shnum > 0 && shoff + shnum * shentsize > buf.length) {
    throw new TomaError(`${path} is truncated: section headers end at ${hex(shoff + shnum * shentsize)}, file has ${buf.length} bytes`)
  }

  const parser = new elfy.Parser()
  const header = parser.parseHeader(buf)
  const programs = parser.parsePrograms(buf, header)
  const rawSections = parser.parseSections(buf, header)

  const segments: ElfSegment[] = programs.map((p, i) => {
    const at = phoff + i * phentsize
    return {
      type: buf.readUInt32LE(at), flags: buf.readUInt32LE(at + 4),
      offset: p.offset, vaddr: p.vaddr, filesz: p.filesz, memsz: p.memsz, align: p.align,
    }
  })

  const sections: ElfSection[] = rawSections.map((s, i) => {
    const at = shoff + i * shentsize
    return {
      name: '', type: buf.readUInt32LE(at + 4), flags: u64le(buf, at + 8),
      addr: s.addr, offset: s.off, size: s.size, link: s.link, info: s.info,
      entsize: u64le(buf, at + 56),
    }
  })
  const shstr = sections[header.shstrndx]
  rawSections.forEach((s, i) => {
    sections[i].name = shstr ? cString(buf, shstr.offset + s.name, shstr.offset + shstr.size) : ''
  })

  for (const seg of segments) {
    if (seg.filesz > 0 && seg.offset + seg.filesz > buf.length) {
      throw new TomaError(`${path} is truncated: a segment ends at ${hex(seg.offset + seg.filesz)}, file has ${buf.length} bytes`)
    }
  }
  for (const sec of sections) {
    if (sec.type !== SHT_NOBITS && sec.size > 0 && sec.offset + sec.size > buf.length) {
      throw new TomaError(`${path} is truncated: section ${sec.name || '?'} ends at ${hex(sec.offset + sec.size)}, file has ${buf.length} bytes`)
    }
  }
  return {type, machine, entry: header.entry, segments, sections}
}

/** Signed 64-bit little-endian read as a JS number. */
export function readI64(buf: Buffer, at: number): number {
  return buf.readUInt32LE(at) + buf.readInt32LE(at + 4) * 0x100000000
}

/** NUL-terminated string starting at `at`, never reading at or past `end`. */
export function cString(buf: Buffer, at: number, end = buf.length): string {
  const stop = Math.min(end, buf.length)
  if (at >= stop) return ''
  let nul = buf.indexOf(0, at)
  if (nul < 0 || nul > stop) nul = stop
  return buf.toString('utf8', at, nul)
}
