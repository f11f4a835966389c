import {DW_AT, DW_FORM} from './constants.js'
import {Cursor, DwarfError} from './cursor.js'
import {addrx, type Die, type Unit} from './info.js'
import type {DwarfSections} from './sections.js'

/** An address range [low, high), link-time. */
export type PcRange = [low: number, high: number]

/** No range list has more entries than this (a bound on a damaged one). */
const MAX_ENTRIES = 1 << 16

const DW_RLE = {end_of_list: 0, base_addressx: 1, startx_endx: 2, startx_length: 3, offset_pair: 4, base_address: 5, start_end: 6, start_length: 7} as const

/**
 * The code ranges of a function or lexical block: [low_pc, high_pc) (high_pc an address, or
 * DWARF 4+'s length), or its DW_AT_ranges list (DWARF 5 .debug_rnglists, DWARF 4 .debug_ranges),
 * as gcc -O2 gives a function split into hot and cold parts. Null when it has neither (a
 * declaration, an abstract instance). A damaged list is a DwarfError.
 */
export function pcRanges(die: Die, unit: Unit, s: DwarfSections): PcRange[] | null {
  const low = die.attrs.get(DW_AT.low_pc)?.value
  const h = die.attrs.get(DW_AT.high_pc)
  if (typeof low === 'number' && h && typeof h.value === 'number') {
    const high = h.form === DW_FORM.addr ? h.value : low + h.value
    return high > low ? [[low, high]] : []
  }
  const r = die.attrs.get(DW_AT.ranges)
  if (!r || typeof r.value !== 'number') return null
  if (unit.version >= 5) {
    const offset = r.form === DW_FORM.rnglistx ? rnglistxOffset(r.value, unit, s) : r.value
    return rnglist(offset, unit, s)
  }
  return debugRanges(r.value, unit, s)
}

/** DW_FORM_rnglistx: an index into the unit's offsets table at DW_AT_rnglists_base. */
function rnglistxOffset(index: number, unit: Unit, s: DwarfSections): number {
  const at = unit.rnglistsBase + index * 4
  if (at + 4 > s.rnglists.length) throw new DwarfError(`.debug_rnglists: index ${index} is past the section`)
  return unit.rnglistsBase + s.rnglists.readUInt32LE(at)
}

function rnglist(offset: number, unit: Unit, s: DwarfSections): PcRange[] {
  const c = new Cursor(s.rnglists, offset, s.rnglists.length, '.debug_rnglists')
  const out: PcRange[] = []
  let base = unit.lowPc
  const address = () => c.sized(unit.addressSize)
  const indexed = (i: number) => addrx(i, {s, addrBase: unit.addrBase, addressSize: unit.addressSize})
  for (let n = 0; n < MAX_ENTRIES; n++) {
    const kind = c.u8()
    switch (kind) {
      case DW_RLE.end_of_list: return out
      case DW_RLE.base_addressx: base = indexed(c.uleb()); break
      case DW_RLE.startx_endx: { const a = indexed(c.uleb()); push(out, a, indexed(c.uleb())); break }
      case DW_RLE.startx_length: { const a = indexed(c.uleb()); push(out, a, a + c.uleb()); break }
      case DW_RLE.offset_pair: { const a = base + c.uleb(); push(out, a, base + c.uleb()); break }
      case DW_RLE.base_address: base = address(); break
      case DW_RLE.start_end: { const a = address(); push(out, a, address()); break }
      case DW_RLE.start_length: { const a = address(); push(out, a, a + c.uleb()); break }
      default: throw new DwarfError(`.debug_rnglists: unknown entry kind ${kind} at ${c.pos - 1}`)
    }
  }
  throw new DwarfError(`.debug_rnglists: list at ${offset} has more than ${MAX_ENTRIES} entries`)
}

/** DWARF 2-4 .debug_ranges: address pairs relative to the base, (0, 0) ending, (max, a) a new base. */
function debugRanges(offset: number, unit: Unit, s: DwarfSections): PcRange[] {
  const c = new Cursor(s.ranges, offset, s.ranges.length, '.debug_ranges')
  const out: PcRange[] = []
  const max = unit.addressSize === 8 ? 0xffffffffffffffffn : 0xffffffffn
  let base = unit.lowPc
  for (let n = 0; n < MAX_ENTRIES; n++) {
    const at = c.take(unit.addressSize * 2)
    const a = unit.addressSize === 8 ? c.buf.readBigUInt64LE(at) : BigInt(c.buf.readUInt32LE(at))
    const b = unit.addressSize === 8 ? c.buf.readBigUInt64LE(at + 8) : BigInt(c.buf.readUInt32LE(at + 4))
    if (a === 0n && b === 0n) return out
    if (a === max) base = Number(b)
    else push(out, base + Number(a), base + Number(b))
  }
  throw new DwarfError(`.debug_ranges: list at ${offset} has more than ${MAX_ENTRIES} entries`)
}

function push(out: PcRange[], low: number, high: number): void {
  if (high > low) out.push([low, high])
}
