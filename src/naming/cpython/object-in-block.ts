import type {AddressSpace} from '../../core/address-space.js'
import {hasFlag} from './flags.js'
import {objectBytes} from './object-size.js'
import {isGcHead} from './gc-head.js'
import type {PyType, PyTypes} from './type-objects.js'
import {GC_HEAD_BYTES, PRE_HEADER_BYTES, OB_TYPE, TPFLAGS_HAVE_GC, type CpythonLayout} from './layout.js'

/** Reference counts above this are not counts (a pointer read as one, say). */
const MAX_REFCNT = 2 ** 40

/** What precedes a type's objects in their block: the GC header, and before it the managed dict's (and weakrefs') two words. */
export function preHeaderBytes(t: PyType, layout: CpythonLayout): number {
  const pre = layout.preHeaderBits.some(bit => hasFlag(t.flags, bit))
  return (hasFlag(t.flags, TPFLAGS_HAVE_GC) ? GC_HEAD_BYTES : 0) + (pre ? PRE_HEADER_BYTES : 0)
}

/** Where objects can start in a block: after no header, a GC header, or the pre-header words (managed dict, 3.12+ weakrefs) and a GC header. */
const HEADERS = [0, GC_HEAD_BYTES, GC_HEAD_BYTES + PRE_HEADER_BYTES]

export interface BlockObject {
  address: number
  type: PyType
}

/**
 * The Python object a block holds, or null: at exactly one of the offsets a header allows, a
 * reference count ≥ 1 (freelists keep dead objects at 0) and an ob_type that is a proven type
 * whose pre-header is that offset, a GC header before a GC object (gc-head.ts), and a size
 * (object-size.ts) that fits the rest of the block.
 */
export function objectInBlock(memory: AddressSpace, layout: CpythonLayout, types: PyTypes, start: number, size: number): BlockObject | null {
  let found: BlockObject | null = null
  for (const header of HEADERS) {
    const obj = start + header
    if (header + 16 > size) break
    const refcnt = memory.readU64(obj)
    if (refcnt === undefined || refcnt < 1 || refcnt > MAX_REFCNT) continue
    const typeAddress = memory.readU64(obj + OB_TYPE)
    if (typeAddress === undefined || typeAddress === 0) continue
    const t = types.at(typeAddress)
    if (!t || preHeaderBytes(t, layout) !== header) continue
    if (header !== 0 && !isGcHead(memory, obj - GC_HEAD_BYTES)) continue
    const bytes = objectBytes(memory, layout, obj, t)
    if (bytes === null || header + bytes > size) continue
    // Two readings of one block: neither is proven.
    if (found) return null
    found = {address: obj, type: t}
  }
  return found
}
