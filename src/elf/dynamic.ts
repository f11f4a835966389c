import {DT_NULL, ELF64_DYN_SIZE} from './constants.js'
import {readI64} from './headers.js'
import {u64le} from '../util/u64le.js'

export interface DynamicEntry { tag: number; value: number }

/** Elf64_Dyn entries (d_tag i64, d_val u64) up to DT_NULL or the end of the area. */
export function parseDynamic(area: Buffer): DynamicEntry[] {
  const out: DynamicEntry[] = []
  for (let at = 0; at + ELF64_DYN_SIZE <= area.length; at += ELF64_DYN_SIZE) {
    const tag = readI64(area, at)
    if (tag === DT_NULL) break
    out.push({tag, value: u64le(area, at + 8)})
  }
  return out
}
