import {ELF64_RELA_SIZE} from './constants.js'
import {readI64} from './headers.js'
import {u64le} from '../util/u64le.js'

export interface Rela { offset: number; type: number; sym: number; addend: number }

/** Elf64_Rela entries (r_offset u64, r_info u64 = sym << 32 | type, r_addend i64). */
export function parseRela(area: Buffer): Rela[] {
  const out: Rela[] = []
  for (let at = 0; at + ELF64_RELA_SIZE <= area.length; at += ELF64_RELA_SIZE) {
    out.push({
      offset: u64le(area, at),
      type: area.readUInt32LE(at + 8),
      sym: area.readUInt32LE(at + 12),
      addend: readI64(area, at + 16),
    })
  }
  return out
}
