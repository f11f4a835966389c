import type {ObjectNames} from './object-names.js'
import {VIA_DEBUG_INFO} from './via.js'

/** Pointee types whose blocks are byte buffers of any length: `char*` names a `char[]`. */
export const BYTE_TYPES = new Set(['char', 'signed char', 'unsigned char', 'char8_t', 'std::byte'])

/**
 * The slots the DWARF tier proved blocks of bytes (a `char[]` a `char*` starts, a `std::string`'s
 * buffer), as a test by slot. Their words are text or data, never a pointer: the layout tier reads
 * no owner word in them. On workloaddemo's timing core they hold most of the heap's bytes, which
 * that tier read a second time after the scan for nothing.
 */
export function provenByteBlocks(names: ObjectNames): (slot: number) => boolean {
  const bytes = names.names.map((n, i) => names.kinds[i] === 'std::string buffer' || (n.endsWith('[]') && BYTE_TYPES.has(n.slice(0, -2))))
  return slot => names.via[slot] === VIA_DEBUG_INFO && bytes[names.typeOf[slot]! - 1] === true
}
