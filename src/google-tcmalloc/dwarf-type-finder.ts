import type {Die} from '../elf/dwarf/info.js'
import {bitFieldNamed, elementCount, memberPath, staticConstant, staticMember, type Place} from '../elf/dwarf/struct-paths.js'
import {stripAliases, type BitField, type DwarfType, type StructType, type TypeTable} from '../elf/dwarf/types.js'

/** Every type the model reads is in this namespace. */
export const NS = 'tcmalloc::tcmalloc_internal::'

/** A struct found in the DWARF, with the DIE that defines it (its static members are that DIE's children). */
export interface FoundStruct {
  type: StructType
  die: Die | undefined
  /** How missing fields of it are named: `Span`, `PageAllocator`. */
  label: string
}

/**
 * Looks up google/tcmalloc's types and fields in a TypeTable, writing down each one not found (by
 * its C++ name, `Span::first_page_`) instead of guessing: the reader's caller then falls back to
 * its table of layouts and says why. Lookups of what is not there give NaN, so that a layout
 * assembled from them is never used while `missing` is not empty.
 */
export class DwarfTypeFinder {
  readonly missing: string[] = []

  constructor(readonly types: TypeTable) {}

  /**
   * The struct of that name (without the namespace), or the first instance of a template of that
   * name (`TcmallocSlab` finds `TcmallocSlab<258>`); each of `names` in turn, for types renamed
   * over tcmalloc's history. Null (and written down) when none is defined.
   */
  struct(label: string, ...names: string[]): FoundStruct | null {
    for (const name of names.length > 0 ? names : [label]) {
      const found = this.structNamed(NS + name)
      if (found) return {...found, label}
    }
    this.missing.push(label)
    return null
  }

  /** The struct of exactly that qualified name, else the first template instance of it by name. */
  structNamed(qualified: string): {type: StructType; die: Die | undefined} | null {
    let type = this.types.structNamed(qualified)
    let name = qualified
    if (!type) {
      const prefix = `${qualified}<`
      const instances = [...this.types.definedNames()].filter(n => n.startsWith(prefix) && !n.slice(prefix.length).includes('>::')).sort()
      for (const n of instances) {
        type = this.types.structNamed(n)
        name = n
        if (type) break
      }
    }
    return type ? {type, die: this.types.definitionOf(name)} : null
  }

  /** A struct-typed member's type (behind typedefs), or null. */
  structOf(place: Place | null): StructType | null {
    const t = place ? stripAliases(place.type) : null
    return t?.kind === 'struct' ? t : null
  }

  /** The member at a dotted path (each of `paths` in turn, for renamed fields), or null and written down. */
  place(s: FoundStruct | null, ...paths: string[]): Place | null {
    if (!s) return null
    for (const p of paths) {
      const found = memberPath(s.type, p)
      if (found) return found
    }
    this.missing.push(`${s.label}::${paths.join(' or ')}`)
    return null
  }

  /** The byte offset of the member at a path, NaN (written down) when not found. */
  offset(s: FoundStruct | null, ...paths: string[]): number {
    return this.place(s, ...paths)?.offset ?? NaN
  }

  /** The member's offset when the struct has it, undefined otherwise: for fields some versions lack. */
  optionalOffset(s: FoundStruct | null, path: string): number | undefined {
    return s ? memberPath(s.type, path)?.offset : undefined
  }

  /** The array member's element count (C array or std::array; 1 for a plain member), NaN when not found. */
  count(s: FoundStruct | null, path: string): number {
    const p = this.place(s, path)
    if (!p) return NaN
    const n = elementCount(p.type)
    if (n !== null) return n
    return stripAliases(p.type).kind === 'pointer' ? 1 : this.lacks(`${s!.label}::${path} (not an array)`)
  }

  bitField(s: FoundStruct | null, name: string): BitField | null {
    return s ? bitFieldNamed(s.type, name) : null
  }

  /** A class's static constant (`Span::kCacheSize`), undefined when the DWARF does not give its value. */
  constant(s: FoundStruct | null, name: string): number | undefined {
    return s?.die ? staticConstant(s.die, name) : undefined
  }

  /** The type a class's static data member has (`Static::span_allocator_`), as a struct, or null. */
  staticMemberStruct(s: FoundStruct | null, name: string, label: string): FoundStruct | null {
    const decl = s?.die ? staticMember(s.die, name) : undefined
    const t = decl ? this.types.typeAttr(decl) : null
    const bare = t ? stripAliases(t) : null
    return bare?.kind === 'struct' ? {type: bare, die: this.types.definitionOf(bare.name), label} : null
  }

  /** A struct reached through a member (its type), labelled for what is missing from it. */
  nested(t: DwarfType | null | undefined, label: string): FoundStruct | null {
    const bare = t ? stripAliases(t) : null
    if (bare?.kind !== 'struct') return null
    return {type: bare, die: this.types.definitionOf(bare.name), label}
  }

  /** Writes down something not found (with why), giving NaN. */
  lacks(what: string): number {
    this.missing.push(what)
    return NaN
  }
}
