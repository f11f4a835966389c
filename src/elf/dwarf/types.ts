import {DW_AT, DW_FORM, DW_TAG} from './constants.js'
import {Cursor} from './cursor.js'
import type {Die} from './info.js'

export interface Member {
  name: string
  offset: number
  type: DwarfType
}

/** A bit-field member: where its bits start, counted from the struct's first bit (bit 0 of byte 0, little-endian). */
export interface BitField {
  name: string
  bitOffset: number
  bitSize: number
}

export interface StructType {
  kind: 'struct'
  /** Qualified: `app::Order`, `std::vector<Item*, std::allocator<Item*> >` (the compiler's spelling of template arguments). */
  name: string
  size: number
  union: boolean
  /** Data members at fixed offsets (bit-fields and static members are left out). */
  members: Member[]
  /**
   * Bit-field members (those with DW_AT_bit_size), kept apart from `members` so that readers of
   * whole members do not meet them. (A DWARF 4/5 bit-field, placed by DW_AT_data_bit_offset alone,
   * is in `members` too, at offset 0: that reading is older than this list and left as it is.)
   */
  bitFields: BitField[]
  /** Base classes at fixed offsets (virtual bases, placed at run time, are left out). */
  bases: Member[]
  /** Template type parameters by name (`_Tp`, `_Key`, `_Val`): what containers hold. */
  params: Map<string, DwarfType>
  /** It or a base has a vtable pointer (`_vptr.X`). */
  polymorphic: boolean
}

export type DwarfType =
  | StructType
  | {kind: 'base'; name: string; size: number}
  /** `target` null: void, a function, or a type this reader does not know. */
  | {kind: 'pointer'; name: string; target: DwarfType | null}
  | {kind: 'array'; name: string; element: DwarfType; count: number}
  /** typedef, const, volatile, restrict, atomic: the same bytes as `target`. */
  | {kind: 'alias'; name: string; target: DwarfType}
  | {kind: 'opaque'; name: string; size: number}

const STRUCT_TAGS = new Set<number>([DW_TAG.structure_type, DW_TAG.class_type, DW_TAG.union_type])
const ALIAS_TAGS = new Set<number>([DW_TAG.typedef, DW_TAG.const_type, DW_TAG.volatile_type, DW_TAG.restrict_type, DW_TAG.atomic_type])
const POINTER_TAGS = new Set<number>([DW_TAG.pointer_type, DW_TAG.reference_type, DW_TAG.rvalue_reference_type])
/** Deeper type chains than this are damage (a cycle through aliases). */
const MAX_CHAIN = 64
/**
 * Types are built depth first (a struct's members, a pointer's target, …): past this depth a type
 * is left unknown rather than the stack overflowing on a file that chains types without end.
 */
const MAX_BUILD_DEPTH = 1000

/** The type behind typedefs and qualifiers. */
export function stripAliases(t: DwarfType): DwarfType {
  for (let i = 0; i < MAX_CHAIN && t.kind === 'alias'; i++) t = t.target
  return t
}

export function sizeOf(t: DwarfType): number {
  t = stripAliases(t)
  switch (t.kind) {
    case 'struct': case 'base': case 'opaque': return t.size
    case 'pointer': return 8
    case 'array': return sizeOf(t.element) * t.count
    case 'alias': return 0
  }
}

/** A string attribute, or undefined. */
export function attrString(die: Die, at: number): string | undefined {
  const v = die.attrs.get(at)?.value
  return typeof v === 'string' ? v : undefined
}

/** A constant or reference attribute, or undefined. */
export function attrNumber(die: Die, at: number): number | undefined {
  const v = die.attrs.get(at)?.value
  return typeof v === 'number' ? v : undefined
}

/**
 * Types from DIEs, built once per DIE. Structs declared in one unit (`struct Item;`) and defined
 * in another are found by their qualified name. Cycles (a node pointing to its own type) are
 * closed through the cache: a struct is cached before its members are built.
 */
export class TypeTable {
  private readonly cache = new Map<number, DwarfType>()
  /** Qualified name → a defining DIE (not a declaration), for declarations to resolve to. */
  private readonly definitions = new Map<string, Die>()
  /** DIEs whose type could not be built (a reference to nowhere, an unknown tag). */
  unknown = 0

  constructor(private readonly dies: Map<number, Die>) {
    for (const die of dies.values()) {
      if (STRUCT_TAGS.has(die.tag) && !die.attrs.has(DW_AT.declaration) && die.attrs.has(DW_AT.byte_size)) {
        const name = qualifiedName(die)
        if (name && !this.definitions.has(name)) this.definitions.set(name, die)
      }
    }
  }

  /** The struct of that qualified name, when some unit defines it. */
  structNamed(name: string): StructType | undefined {
    const die = this.definitions.get(name)
    const t = die ? this.typeOf(die) : undefined
    return t?.kind === 'struct' ? t : undefined
  }

  /** The DIE defining the struct of that qualified name (its static members and constants are its children). */
  definitionOf(name: string): Die | undefined {
    return this.definitions.get(name)
  }

  /** The qualified names of the structs some unit defines: a template's instances are found by their names' start. */
  definedNames(): IterableIterator<string> {
    return this.definitions.keys()
  }

  /** The type an entry's DW_AT_type names (following DW_AT_specification / abstract_origin), null if none or unknown. */
  typeAttr(die: Die, depth = 0): DwarfType | null {
    for (let d: Die | undefined = die, i = 0; d && i < 8; i++) {
      const ref = attrNumber(d, DW_AT.type)
      if (ref !== undefined && d.attrs.get(DW_AT.type)?.form === DW_FORM.ref4) {
        const target = this.dies.get(ref)
        return target ? this.typeOf(target, depth + 1) : null
      }
      const next: number | undefined = attrNumber(d, DW_AT.specification) ?? attrNumber(d, DW_AT.abstract_origin)
      d = next !== undefined ? this.dies.get(next) : undefined
    }
    return null
  }

  typeOf(die: Die, depth = 0): DwarfType | null {
    const cached = this.cache.get(die.offset)
    if (cached) return cached
    if (depth > MAX_BUILD_DEPTH) {
      this.unknown++
      return null
    }
    const name = attrString(die, DW_AT.name)
    if (STRUCT_TAGS.has(die.tag)) {
      const qualified = qualifiedName(die) ?? '(anonymous)'
      if (die.attrs.has(DW_AT.declaration)) {
        const def = this.definitions.get(qualified)
        const t = def ? this.typeOf(def, depth + 1) : null
        const result = t ?? {kind: 'opaque' as const, name: qualified, size: 0}
        this.cache.set(die.offset, result)
        return result
      }
      const s: StructType = {kind: 'struct', name: qualified, size: attrNumber(die, DW_AT.byte_size) ?? 0, union: die.tag === DW_TAG.union_type, members: [], bitFields: [], bases: [], params: new Map(), polymorphic: false}
      this.cache.set(die.offset, s)
      for (const child of die.children) {
        if (child.tag === DW_TAG.template_type_param) {
          const pname = attrString(child, DW_AT.name)
          const pt = this.typeAttr(child, depth)
          if (pname && pt) s.params.set(pname, pt)
          continue
        }
        if (child.tag !== DW_TAG.member && child.tag !== DW_TAG.inheritance) continue
        if (child.attrs.has(DW_AT.declaration)) continue
        const mname = attrString(child, DW_AT.name) ?? ''
        if (mname.startsWith('_vptr.')) s.polymorphic = true
        const bits = child.tag === DW_TAG.member ? bitFieldPlace(child, s.union) : undefined
        if (bits) s.bitFields.push({name: mname, ...bits})
        const offset = s.union ? 0 : memberOffset(child)
        const mt = this.typeAttr(child, depth)
        if (offset === undefined || !mt) {
          this.unknown++
          continue
        }
        if (child.tag === DW_TAG.inheritance) {
          s.bases.push({name: mt.kind === 'struct' ? mt.name : mname, offset, type: mt})
          if (mt.kind === 'struct' && mt.polymorphic) s.polymorphic = true
        } else s.members.push({name: mname, offset, type: mt})
      }
      return s
    }
    let result: DwarfType | null = null
    if (die.tag === DW_TAG.base_type || die.tag === DW_TAG.enumeration_type || die.tag === DW_TAG.unspecified_type) {
      result = {kind: 'base', name: qualifiedName(die) ?? (name !== undefined ? demangledSpelling(name) : '?'), size: attrNumber(die, DW_AT.byte_size) ?? 0}
    } else if (POINTER_TAGS.has(die.tag)) {
      const p = {kind: 'pointer' as const, name: '', target: null as DwarfType | null}
      this.cache.set(die.offset, p)
      p.target = this.typeAttr(die, depth)
      const suffix = die.tag === DW_TAG.pointer_type ? '*' : die.tag === DW_TAG.reference_type ? '&' : '&&'
      p.name = `${p.target ? displayName(p.target) : 'void'}${suffix}`
      return p
    } else if (ALIAS_TAGS.has(die.tag)) {
      const target = this.typeAttr(die, depth)
      if (die.tag === DW_TAG.typedef) {
        result = target ? {kind: 'alias', name: qualifiedName(die) ?? name ?? '?', target} : null
      } else {
        const q = die.tag === DW_TAG.const_type ? 'const' : die.tag === DW_TAG.volatile_type ? 'volatile' : die.tag === DW_TAG.atomic_type ? '_Atomic' : 'restrict'
        // The demangler's spelling, as the vtable tier's names have it: `int const`, `Item const*`.
        result = target ? {kind: 'alias', name: `${displayName(target)} ${q}`, target} : null
      }
    } else if (die.tag === DW_TAG.array_type) {
      const element = this.typeAttr(die, depth)
      let count = 1
      let bounded = true
      for (const sub of die.children) {
        if (sub.tag !== DW_TAG.subrange_type) continue
        const n = attrNumber(sub, DW_AT.count) ?? ((attrNumber(sub, DW_AT.upper_bound) ?? -1) + 1)
        if (!(n > 0)) bounded = false
        count *= n
      }
      // A flexible or zero-length array has no elements this reader can count.
      result = element && bounded && Number.isSafeInteger(count) ? {kind: 'array', name: `${displayName(element)}[${count}]`, element, count} : null
    } else if (die.tag === DW_TAG.subroutine_type) {
      result = {kind: 'opaque', name: 'function', size: 0}
    }
    if (!result) this.unknown++
    else this.cache.set(die.offset, result)
    return result
  }
}

/** How a type is spelt in names: `Item`, `Item*`, `const int`, `std::__cxx11::basic_string<char, …>`. */
export function displayName(t: DwarfType): string {
  return t.name
}

/**
 * DW_AT_data_member_location: a constant (DWARF 3+), or the DWARF 2 expression
 * `DW_OP_plus_uconst n`. Anything else (virtual bases) is undefined.
 */
function memberOffset(die: Die): number | undefined {
  const v = die.attrs.get(DW_AT.data_member_location)
  if (!v) return die.tag === DW_TAG.member ? 0 : undefined
  if (typeof v.value === 'number') return v.value >= 0 ? v.value : undefined
  if (Buffer.isBuffer(v.value) && v.value.length >= 2 && v.value[0] === 0x23) {
    const c = new Cursor(v.value, 1, v.value.length, 'DW_AT_data_member_location')
    const n = c.uleb()
    return c.atEnd ? n : undefined
  }
  return undefined
}

/**
 * Where a bit-field member's bits are, from the struct's first bit; undefined for a whole member.
 * DWARF 4/5 say it directly (DW_AT_data_bit_offset). DWARF 2/3 give the storage unit's byte
 * offset and size (DW_AT_data_member_location, DW_AT_byte_size) and DW_AT_bit_offset counted from
 * the unit's most significant bit: on a little-endian target the field's lowest bit is at
 * unit bits − bit_offset − bit_size.
 */
function bitFieldPlace(die: Die, inUnion: boolean): {bitOffset: number; bitSize: number} | undefined {
  const bitSize = attrNumber(die, DW_AT.bit_size)
  if (bitSize === undefined || !(bitSize > 0)) return undefined
  const direct = attrNumber(die, DW_AT.data_bit_offset)
  if (direct !== undefined) return direct >= 0 ? {bitOffset: direct, bitSize} : undefined
  const fromMsb = attrNumber(die, DW_AT.bit_offset)
  const unitBytes = attrNumber(die, DW_AT.byte_size)
  const unitOffset = inUnion ? 0 : memberOffset(die)
  if (fromMsb === undefined || unitBytes === undefined || unitOffset === undefined) return undefined
  const bitOffset = unitOffset * 8 + unitBytes * 8 - fromMsb - bitSize
  return bitOffset >= 0 ? {bitOffset, bitSize} : undefined
}

/**
 * `ns::Outer::Inner` from the entry's namespace and class parents. Null for an unnamed type.
 * A type local to a function is named by its own name only.
 */
export function qualifiedName(die: Die): string | null {
  const own = attrString(die, DW_AT.name)
  if (own === undefined) return null
  const parts = [own]
  for (let p = die.parent, i = 0; p && i < MAX_CHAIN; p = p.parent, i++) {
    if (p.tag === DW_TAG.namespace) parts.push(attrString(p, DW_AT.name) ?? '(anonymous namespace)')
    else if (STRUCT_TAGS.has(p.tag)) parts.push(attrString(p, DW_AT.name) ?? '(anonymous)')
    else break
  }
  return demangledSpelling(parts.reverse().join('::'))
}

/** gcc's DWARF spells some integer types the long way; the demangler (and so the vtable tier) the short. */
const SPELLINGS: Array<[RegExp, string]> = [
  [/\blong long unsigned int\b/g, 'unsigned long long'],
  [/\blong long int\b/g, 'long long'],
  [/\blong unsigned int\b/g, 'unsigned long'],
  [/\bshort unsigned int\b/g, 'unsigned short'],
  [/\blong int\b/g, 'long'],
  [/\bshort int\b/g, 'short'],
]

/** A name from DWARF with the integer types (alone or as template arguments) spelt as the demangler does: `std::set<long>`. */
export function demangledSpelling(name: string): string {
  if (!/\b(long|short)\b/.test(name)) return name
  for (const [re, short] of SPELLINGS) name = name.replace(re, short)
  return name
}
