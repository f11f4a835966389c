import {sharedUint32} from '../util/shared-arrays.js'
import type {ObjectTypes, TypeIds} from '../graph/object-types.js'
import {VIA_NONE, VIA_VTABLE, viaLabel} from './via.js'
import {hex} from '../errors.js'

/** Two tiers (or two owners) that gave one object different names. */
export interface NameConflict {
  /** The object's first byte. */
  address: number
  kept: string
  offered: string
  /** viaLabel of the tier that offered the name that was not taken. */
  offeredVia: string
  /** Neither name was kept: the tier dropped the one it had given (two types from one source). */
  dropped?: boolean
}

/** What ObjectNames holds, as plain data (fields as there). */
export interface ObjectNamesParts {
  typeOf: TypeIds
  via: Uint8Array
  names: string[]
  kinds: string[]
  conflicts: NameConflict[]
  conflictCount: number
  namedBy: Float64Array
}

/** Conflicts kept with their addresses (the count goes on past it). */
const CONFLICTS_KEPT = 100

/**
 * Every object slot's name and how it was known. Names are shared strings (`names`, ids from 1);
 * each name has a kind: what sort of block it is, from a small vocabulary ("object" for a C++ or C
 * type, "std::string buffer", "python object", …), so that queries can group and filter by it.
 *
 * Tiers run from the most certain: a slot keeps the first name it is given. A later tier offering
 * a different name is a conflict, recorded with its address and reported, never resolved by
 * guessing (`forget` drops a name a tier finds it cannot stand by).
 */
export class ObjectNames {
  typeOf: TypeIds
  readonly via: Uint8Array
  readonly names: string[]
  readonly kinds: string[]
  private readonly idOfName = new Map<string, number>()
  readonly conflicts: NameConflict[]
  conflictCount: number
  /** Named slots per via code. */
  readonly namedBy: Float64Array

  /** The names a naming pass made (a worker's, handed back as plain data), or startingFrom's. */
  constructor(parts: ObjectNamesParts) {
    this.typeOf = parts.typeOf
    this.via = parts.via
    this.names = parts.names
    this.kinds = parts.kinds
    this.conflicts = parts.conflicts
    this.conflictCount = parts.conflictCount
    this.namedBy = parts.namedBy
    this.names.forEach((n, i) => this.idOfName.set(n, i + 1))
  }

  /** The vtable tier's names, which the other tiers start from (they name in `vtableTypes.typeOf` itself). */
  static startingFrom(vtableTypes: ObjectTypes): ObjectNames {
    const typeOf = vtableTypes.typeOf
    const via = new Uint8Array(typeOf.length)
    for (let i = 0; i < typeOf.length; i++) {
      if (typeOf[i] !== 0) via[i] = VIA_VTABLE
    }
    const namedBy = new Float64Array(8)
    namedBy[VIA_VTABLE] = vtableTypes.typed
    const names = [...vtableTypes.names]
    return new ObjectNames({typeOf, via, names, kinds: names.map(() => 'object'), conflicts: [], conflictCount: 0, namedBy})
  }

  /** Everything, as plain data and typed arrays. */
  parts(): ObjectNamesParts {
    const {typeOf, via, names, kinds, conflicts, conflictCount, namedBy} = this
    return {typeOf, via, names, kinds, conflicts, conflictCount, namedBy}
  }

  get slots(): number {
    return this.typeOf.length
  }

  /** The name of a slot, or null. */
  nameOf(slot: number): string | null {
    const id = this.typeOf[slot] ?? 0
    return id === 0 ? null : this.names[id - 1]!
  }

  kindOf(slot: number): string | null {
    const id = this.typeOf[slot] ?? 0
    return id === 0 ? null : this.kinds[id - 1]!
  }

  /** The id of a name, made on first use (its kind is fixed by that first use). */
  idOf(name: string, kind: string): number {
    let id = this.idOfName.get(name)
    if (id === undefined) {
      this.names.push(name)
      this.kinds.push(kind)
      id = this.names.length
      this.idOfName.set(name, id)
      if (id > 0xffff && this.typeOf instanceof Uint16Array) this.typeOf = widened(this.typeOf)
    }
    return id
  }

  /**
   * Names a slot. True when the slot now has this name, or an earlier one of the same kind;
   * false when it had a name of another kind, which is recorded as a conflict.
   */
  assign(slot: number, name: string, kind: string, via: number, address: number): boolean {
    const had = this.typeOf[slot]!
    // Same kind: a tier agreeing with an earlier, often more specific, name ("std::vector body"
    // offered where debug information said "std::vector<app::Shape*> body").
    if (had !== 0 && this.kinds[had - 1] === kind) return true
    const id = this.idOf(name, kind)
    if (had === id) return true
    if (had !== 0) {
      this.conflict(address, this.names[had - 1]!, name, via)
      return false
    }
    this.typeOf[slot] = id
    this.via[slot] = via
    this.namedBy[via]++
    return true
  }

  /** Drops a slot's name (a tier that finds, later, that it gave one object two names). */
  forget(slot: number): void {
    if (this.typeOf[slot] === 0) return
    this.namedBy[this.via[slot]!]--
    this.typeOf[slot] = 0
    this.via[slot] = VIA_NONE
  }

  conflict(address: number, kept: string, offered: string, via: number, dropped = false): void {
    this.conflictCount++
    if (this.conflicts.length < CONFLICTS_KEPT) this.conflicts.push({address, kept, offered, offeredVia: viaLabel(via), ...(dropped ? {dropped} : {})})
  }

  /** The types part, as the retention analysis and the index take it. */
  asTypes(): ObjectTypes {
    let typed = 0
    for (let i = 0; i < this.typeOf.length; i++) if (this.typeOf[i] !== 0) typed++
    return {typeOf: this.typeOf, names: this.names, typed}
  }
}

/** One line for a conflict: "0x… named app::A (vtable) and app::B (debug-info)". */
export function conflictLine(c: NameConflict): string {
  if (c.dropped) return `object ${hex(c.address)} is ${c.kept} and, by ${c.offeredVia} too, ${c.offered}: named neither`
  return `object ${hex(c.address)} is ${c.kept}, but ${c.offeredVia} says ${c.offered}: kept the first`
}

function widened(ids: Uint16Array): Uint32Array {
  const wide = sharedUint32(ids.length)
  wide.set(ids)
  return wide
}
