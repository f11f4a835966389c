import type {AddressSpace} from '../../core/address-space.js'
import {hasFlag} from './flags.js'
import type {PyType} from './type-objects.js'
import {OB_SIZE, TPFLAGS_LONG_SUBCLASS, TPFLAGS_UNICODE_SUBCLASS, UNICODE_LENGTH, UNICODE_STATE, type CpythonLayout} from './layout.js'

/** PyUnicode's state bit-field: kind (bits 2–4), compact (5), ascii (6). */
export interface UnicodeState {
  length: number
  kind: number
  compact: boolean
  ascii: boolean
}

/** A str's length and state bits, or null when they are not a str's (kind 1, 2 or 4). */
export function unicodeState(memory: AddressSpace, obj: number): UnicodeState | null {
  const length = memory.readU64(obj + UNICODE_LENGTH)
  const state = memory.readU32(obj + UNICODE_STATE)
  if (length === undefined || state === undefined || length > 2 ** 40) return null
  const kind = Math.floor(state / 4) % 8
  if (kind !== 1 && kind !== 2 && kind !== 4) return null
  return {length, kind, compact: Math.floor(state / 32) % 2 === 1, ascii: Math.floor(state / 64) % 2 === 1}
}

/**
 * The bytes an object of type `t` at `obj` takes (from the object's first byte), or null when its
 * own words contradict its type: tp_basicsize, plus tp_itemsize × ob_size for variable-sized types
 * (int keeps its sign in ob_size, 3.12 its digits × 8 in lv_tag, and always has one digit); a
 * compact str takes its struct and length + 1 characters of its kind (its tp_basicsize is the
 * non-compact struct's).
 */
export function objectBytes(memory: AddressSpace, layout: CpythonLayout, obj: number, t: PyType): number | null {
  if (hasFlag(t.flags, TPFLAGS_UNICODE_SUBCLASS)) {
    const s = unicodeState(memory, obj)
    if (!s) return null
    if (!s.compact) return t.basicsize
    if (s.ascii) return s.kind === 1 ? layout.asciiObjectBytes + s.length + 1 : null
    return layout.compactUnicodeObjectBytes + (s.length + 1) * s.kind
  }
  if (t.itemsize === 0) return t.basicsize
  const raw = memory.readU64(obj + OB_SIZE)
  if (raw === undefined) return null
  // ob_size is signed: a negative int's digits count is its absolute value.
  const signed = raw >= 2 ** 63 ? raw - 2 ** 64 : raw
  let n = signed
  if (hasFlag(t.flags, TPFLAGS_LONG_SUBCLASS)) n = Math.max(1, layout.longDigitsInTag ? Math.floor(raw / 8) : Math.abs(signed))
  if (n < 0 || n > 2 ** 40) return null
  return t.basicsize + t.itemsize * n
}
