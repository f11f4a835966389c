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

/**
 * The DWARF tier's names, slot by slot, reconciled as they arrive: the same type again agrees; a
 * type and one that starts with it (a derived class and its first base, a struct and its first
 * member's struct) agree and the outer one is kept; a container body and a pointer to
 * its first element agree and the body is kept; a polymorphic type agrees with the vtable tier's
 * name when it is that type or one of its bases. Anything else is a conflict: recorded, and the
 * block is not named by this tier (nor offered again).
 *
 * Held in typed arrays by slot, each distinct offer once: a Map of one object per block taken
 * (two million on workloaddemo's timing core) cost seconds of lookups and of garbage collection.
 */
export class DwarfClaims {
  /** Per slot: 1 + the index in `offers` of what the block was taken for (0: not taken). */
  private readonly claimOf: Uint32Array
  /** Per slot: 1 once the block met two types (not named by this tier). */
  private readonly conflicted: Uint8Array
  /** Per slot: when it was first taken (1, 2, …): namedByKind lists the kinds in that order. */
  private readonly takenAt: Uint32Array
  private taken = 0
  /** The distinct offers, and their indexes by name. */
  private readonly offers: Offer[] = []
  private readonly offersNamed = new Map<string, number[]>()
  conflicts = 0

  constructor(
    private readonly names: ObjectNames,
    /** The DWARF struct of a qualified name (for a vtable tier's name), if some unit defines it. */
    private readonly structNamed: (name: string) => StructType | undefined,
  ) {
    this.claimOf = new Uint32Array(names.slots)
    this.conflicted = new Uint8Array(names.slots)
    this.takenAt = new Uint32Array(names.slots)
  }

  /** True when the block may be taken to hold `offer` (named now, or already named compatibly). */
  claim(slot: number, start: number, offer: Offer): boolean {
    const hadId = this.claimOf[slot]!
    if (hadId !== 0) {
      if (this.conflicted[slot] !== 0) return false
      const had = this.offers[hadId - 1]!
      if (had.name === offer.name) return true
      if (had.element !== null && had.element === offer.name) return true
      if (offer.element !== null && offer.element === had.name) return this.replace(slot, start, offer)
      if (had.struct && offer.struct) {
        if (startsWith(had.struct, offer.struct)) return true
        if (startsWith(offer.struct, had.struct)) return this.replace(slot, start, offer)
      }
      return this.conflict(slot, start, had.name, offer, true)
    }
    const other = this.names.nameOf(slot)
    if (other !== null) {
      if (this.names.via[slot] === VIA_VTABLE && offer.kind === 'object') {
        // The vtable names the most derived type: a DWARF base of it agrees.
        const derived = this.structNamed(other)
        const agrees = offer.struct !== null && offer.struct.polymorphic && (other === offer.name || !derived || isBaseOf(offer.struct, derived))
        return agrees ? true : this.conflict(slot, start, other, offer, false)
      }
      if (this.names.kindOf(slot) === offer.kind && other === offer.name) return true
      return this.conflict(slot, start, other, offer, false)
    }
    this.names.assign(slot, offer.name, offer.kind, VIA_DEBUG_INFO, start)
    this.take(slot, offer)
    return true
  }

  /** Whether this tier has taken the block for some type (named, or conflicted). */
  has(slot: number): boolean {
    return this.claimOf[slot] !== 0
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

  /** Blocks this tier named, per kind; the kinds in the order their first such block was taken. */
  namedByKind(): Map<string, number> {
    const count = new Map<string, number>()
    const first = new Map<string, number>()
    for (let slot = 0; slot < this.claimOf.length; slot++) {
      const id = this.claimOf[slot]!
      if (id === 0 || this.conflicted[slot] !== 0) continue
      const kind = this.offers[id - 1]!.kind
      count.set(kind, (count.get(kind) ?? 0) + 1)
      const at = this.takenAt[slot]!
      if (!(first.get(kind)! <= at)) first.set(kind, at)
    }
    return new Map([...count].sort((a, b) => first.get(a[0])! - first.get(b[0])!))
  }

  /** The slot is now taken for `offer` (its first, or in place of the one it had). */
  private take(slot: number, offer: Offer): void {
    if (this.claimOf[slot] === 0) this.takenAt[slot] = ++this.taken
    this.claimOf[slot] = this.offerId(offer)
  }

  /** 1 + the index of the offer equal to `offer` (added the first time). */
  private offerId(offer: Offer): number {
    let ids = this.offersNamed.get(offer.name)
    if (!ids) this.offersNamed.set(offer.name, (ids = []))
    for (const id of ids) {
      const o = this.offers[id]!
      if (o.kind === offer.kind && o.struct === offer.struct && o.element === offer.element) return id + 1
    }
    this.offers.push({name: offer.name, kind: offer.kind, struct: offer.struct, element: offer.element})
    ids.push(this.offers.length - 1)
    return this.offers.length
  }

  private replace(slot: number, start: number, offer: Offer): boolean {
    this.names.forget(slot)
    this.names.assign(slot, offer.name, offer.kind, VIA_DEBUG_INFO, start)
    this.take(slot, offer)
    return true
  }

  private conflict(slot: number, start: number, kept: string, offer: Offer, own: boolean): boolean {
    this.conflicts++
    this.names.conflict(start, kept, offer.name, VIA_DEBUG_INFO, own)
    if (own) {
      // Two types for one block from the DWARF alone: neither is proven, the block goes unnamed.
      if (this.names.via[slot] === VIA_DEBUG_INFO) this.names.forget(slot)
    } else this.take(slot, offer)
    this.conflicted[slot] = 1
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
