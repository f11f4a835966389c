import {stripAliases, type StructType} from '../../elf/dwarf/types.js'
import type {ObjectNames} from '../object-names.js'
import {VIA_DEBUG_INFO, VIA_VTABLE} from '../via.js'

/** What the DWARF tier says a block is. */
export interface Offer {
  name: string
  kind: string
  /** The C/C++ type, for an 'object'. */
  struct: StructType | null
  /** A container body's or node's element type, as named: a pointer typed by it to the block's start agrees. */
  element: string | null
}

interface Claim extends Offer {
  conflicted: boolean
}

/**
 * The DWARF tier's names, slot by slot, reconciled as they arrive: the same type again agrees; a
 * type and one that starts with it (a derived class and its first base, a struct and its first
 * member's struct) agree and the outer one is kept; a container body and a pointer to
 * its first element agree and the body is kept; a polymorphic type agrees with the vtable tier's
 * name when it is that type or one of its bases. Anything else is a conflict: recorded, and the
 * block is not named by this tier (nor offered again).
 */
export class DwarfClaims {
  private readonly claims = new Map<number, Claim>()
  conflicts = 0

  constructor(
    private readonly names: ObjectNames,
    /** The DWARF struct of a qualified name (for a vtable tier's name), if some unit defines it. */
    private readonly structNamed: (name: string) => StructType | undefined,
  ) {}

  /** True when the block may be taken to hold `offer` (named now, or already named compatibly). */
  claim(slot: number, start: number, offer: Offer): boolean {
    const had = this.claims.get(slot)
    if (had) {
      if (had.conflicted) return false
      if (had.name === offer.name) return true
      if (had.element !== null && had.element === offer.name) return true
      if (offer.element !== null && offer.element === had.name) return this.replace(slot, start, had, offer)
      if (had.struct && offer.struct) {
        if (startsWith(had.struct, offer.struct)) return true
        if (startsWith(offer.struct, had.struct)) return this.replace(slot, start, had, offer)
      }
      return this.conflict(slot, start, had.name, offer, had)
    }
    const other = this.names.nameOf(slot)
    if (other !== null) {
      if (this.names.via[slot] === VIA_VTABLE && offer.kind === 'object') {
        // The vtable names the most derived type: a DWARF base of it agrees.
        const derived = this.structNamed(other)
        const agrees = offer.struct !== null && offer.struct.polymorphic && (other === offer.name || !derived || isBaseOf(offer.struct, derived))
        return agrees ? true : this.conflict(slot, start, other, offer, null)
      }
      if (this.names.kindOf(slot) === offer.kind && other === offer.name) return true
      return this.conflict(slot, start, other, offer, null)
    }
    this.names.assign(slot, offer.name, offer.kind, VIA_DEBUG_INFO, start)
    this.claims.set(slot, {...offer, conflicted: false})
    return true
  }

  /** Whether this tier has taken the block for some type (named, or conflicted). */
  has(slot: number): boolean {
    return this.claims.has(slot)
  }

  /**
   * The DWARF struct of the block's vtable name (its dynamic, most derived type), when the vtable
   * tier named it and some unit defines that type: a base pointer's block is scanned as it, so
   * the derived class's own members are followed too.
   */
  dynamicType(slot: number): StructType | undefined {
    if (this.names.via[slot] !== VIA_VTABLE) return undefined
    const name = this.names.nameOf(slot)
    return name === null ? undefined : this.structNamed(name)
  }

  /** Blocks this tier named, per kind. */
  namedByKind(): Map<string, number> {
    const out = new Map<string, number>()
    for (const c of this.claims.values()) if (!c.conflicted) out.set(c.kind, (out.get(c.kind) ?? 0) + 1)
    return out
  }

  private replace(slot: number, start: number, had: Claim, offer: Offer): boolean {
    this.names.forget(slot)
    this.names.assign(slot, offer.name, offer.kind, VIA_DEBUG_INFO, start)
    Object.assign(had, offer)
    return true
  }

  private conflict(slot: number, start: number, kept: string, offer: Offer, own: Claim | null): boolean {
    this.conflicts++
    this.names.conflict(start, kept, offer.name, VIA_DEBUG_INFO, own !== null)
    if (own) {
      // Two types for one block from the DWARF alone: neither is proven, the block goes unnamed.
      if (this.names.via[slot] === VIA_DEBUG_INFO) this.names.forget(slot)
      own.conflicted = true
    } else this.claims.set(slot, {...offer, conflicted: true})
    return false
  }
}

/**
 * `outer` is `inner`, or has `inner` at its offset 0 (a base class or a member, at any depth): a
 * pointer of either type to its start is explained by `outer`. Compared by name.
 */
export function startsWith(outer: StructType, inner: StructType, depth = 0): boolean {
  if (outer.name === inner.name) return true
  if (depth > 32) return false
  return [...outer.bases, ...outer.members].some(m => {
    const t = stripAliases(m.type)
    return m.offset === 0 && t.kind === 'struct' && !t.union && startsWith(t, inner, depth + 1)
  })
}

/** `base` is `derived` or one of its (transitive) base classes, compared by name. */
export function isBaseOf(base: StructType, derived: StructType, depth = 0): boolean {
  if (base.name === derived.name) return true
  if (depth > 32) return false
  return derived.bases.some(b => {
    const t = stripAliases(b.type)
    return t.kind === 'struct' && isBaseOf(base, t, depth + 1)
  })
}
