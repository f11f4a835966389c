import {DW_AT, DW_TAG} from './constants.js'
import type {Die} from './info.js'
import {attrString, stripAliases, type BitField, type DwarfType, type StructType} from './types.js'

/** A member found by its path: its byte offset from the outer struct's start, and its type. */
export interface Place {
  offset: number
  type: DwarfType
}

/** Anonymous members and bases nested deeper than this are not searched (a bound on damaged or cyclic types). */
const MAX_NESTING = 16

/**
 * The member at a dotted path (`regions_.n_`, `cache_.cache_.root_`) of a struct, each step
 * looked for among the members of the type reached so far, then inside its anonymous structs and
 * unions and its base classes (C++ reaches those members by the same name). Null when a step is
 * not found, or is a bit-field (bitFieldNamed places those).
 */
export function memberPath(s: StructType, path: string): Place | null {
  let place: Place = {offset: 0, type: s}
  for (const step of path.split('.')) {
    const t = stripAliases(place.type)
    if (t.kind !== 'struct') return null
    const found = memberNamed(t, step, 0)
    if (!found) return null
    place = {offset: place.offset + found.offset, type: found.type}
  }
  return place
}

function memberNamed(s: StructType, name: string, depth: number): Place | null {
  // A DWARF 5 bit-field is among the members too, at offset 0 (types.ts): not a whole member's place.
  const own = s.bitFields.some(b => b.name === name) ? undefined : s.members.find(m => m.name === name)
  if (own) return {offset: own.offset, type: own.type}
  if (depth >= MAX_NESTING) return null
  for (const m of [...s.members.filter(m => m.name === ''), ...s.bases]) {
    const t = stripAliases(m.type)
    if (t.kind !== 'struct') continue
    const inner = memberNamed(t, name, depth + 1)
    if (inner) return {offset: m.offset + inner.offset, type: inner.type}
  }
  return null
}

/** The bit-field of that name, its bit offset counted from this struct's start (through anonymous members and bases, as memberPath). */
export function bitFieldNamed(s: StructType, name: string, depth = 0): BitField | null {
  const own = s.bitFields.find(b => b.name === name)
  if (own) return own
  if (depth >= MAX_NESTING) return null
  for (const m of [...s.members.filter(m => m.name === ''), ...s.bases]) {
    const t = stripAliases(m.type)
    if (t.kind !== 'struct') continue
    const inner = bitFieldNamed(t, name, depth + 1)
    if (inner) return {name, bitOffset: m.offset * 8 + inner.bitOffset, bitSize: inner.bitSize}
  }
  return null
}

/** The array type behind a C array or a std::array (its `_M_elems`), or null. */
function arrayOf(t: DwarfType): Extract<DwarfType, {kind: 'array'}> | null {
  const bare = stripAliases(t)
  if (bare.kind === 'array') return bare
  if (bare.kind === 'struct' && bare.name.startsWith('std::array<')) {
    const elems = bare.members.find(m => m.name === '_M_elems')
    const inner = elems ? stripAliases(elems.type) : null
    return inner?.kind === 'array' ? inner : null
  }
  return null
}

/** How many elements an array member has: a C array's count, or std::array's. Null for anything else. */
export function elementCount(t: DwarfType): number | null {
  return arrayOf(t)?.count ?? null
}

/** An array's (or std::array's) element type, or null. */
export function elementType(t: DwarfType): DwarfType | null {
  return arrayOf(t)?.element ?? null
}

/**
 * A DW_AT_const_value as a number: a constant form, or a block of up to 8 bytes (gcc gives a
 * class-typed constant that way), little-endian. Undefined for anything else or past 2^53.
 */
export function constValueOf(die: Die): number | undefined {
  const v = die.attrs.get(DW_AT.const_value)?.value
  if (typeof v === 'number') return v
  if (!Buffer.isBuffer(v) || v.length === 0 || v.length > 8) return undefined
  let n = 0
  for (let i = v.length - 1; i >= 0; i--) n = n * 256 + v[i]!
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * A class's static constant (`static constexpr size_t kCacheSize = 12;`): gcc's DWARF 5 has it as
 * a DW_TAG_variable child, DWARF 4 as a DW_TAG_member child, each with its DW_AT_const_value.
 */
export function staticConstant(classDie: Die, name: string): number | undefined {
  for (const child of classDie.children) {
    if (child.tag !== DW_TAG.variable && child.tag !== DW_TAG.member) continue
    if (attrString(child, DW_AT.name) !== name) continue
    const v = constValueOf(child)
    if (v !== undefined) return v
  }
  return undefined
}

/** A class's static data member's declaration (`static SizeMap sizemap_;`): its type is what the class keeps there. */
export function staticMember(classDie: Die, name: string): Die | undefined {
  return classDie.children.find(c => (c.tag === DW_TAG.variable || c.tag === DW_TAG.member) && c.attrs.has(DW_AT.declaration) && attrString(c, DW_AT.name) === name)
}
