/**
 * How a name was known: the tier that gave it. One byte per object slot in the index
 * (`object.via`), 0 where no tier named the slot. Holder names are not stored: they are worked
 * out by queries from the dominator tree and are never a type (`HOLDER` labels them in output).
 */
export const VIA_NONE = 0
/** The object's first word is a vtable's address point (graph/types.ts). */
export const VIA_VTABLE = 1
/** A language runtime's own header names it (CPython's ob_type, Lua's GC lists). */
export const VIA_RUNTIME = 2
/** DWARF: a typed root or a typed pointer field reaches the object. */
export const VIA_DEBUG_INFO = 3
/** The standard library's layout: the owner's words (pointer, length, capacity, links) agree with the block. */
export const VIA_LAYOUT = 4
/** A pool: vtable-bearing objects at a fixed stride inside a large block. */
export const VIA_POOL = 5
/** The block's bytes are a NUL-terminated text that fills it. */
export const VIA_CONTENT = 6

export const VIA_LABELS = ['', 'vtable', 'runtime', 'debug-info', 'layout', 'pool', 'content'] as const
export type ViaLabel = (typeof VIA_LABELS)[number] | 'holder'

/** The label of a via code ('' for none or an unknown code from a damaged index). */
export function viaLabel(via: number): ViaLabel {
  return VIA_LABELS[via] ?? ''
}
