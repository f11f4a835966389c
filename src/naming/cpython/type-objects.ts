import type {AddressSpace} from '../../core/address-space.js'
import {hasFlag} from './flags.js'
import {
  OB_TYPE, TP_BASE, TP_BASICSIZE, TP_FLAGS, TP_ITEMSIZE, TP_NAME,
  TPFLAGS_HEAPTYPE, TPFLAGS_READY, TPFLAGS_TYPE_SUBCLASS,
} from './layout.js'

/** A PyTypeObject proven to be one (below), with the fields the recogniser uses. */
export interface PyType {
  address: number
  name: string
  basicsize: number
  itemsize: number
  flags: number
  base: number
}

/** Metatypes between a type and `type` (a class of a metaclass of a metaclass is already rare). */
const META_DEPTH = 4
/** Base classes walked for isSubtype (CPython's deepest hierarchies are a few dozen). */
const BASE_DEPTH = 64
const MAX_BASICSIZE = 2 ** 20
const MAX_ITEMSIZE = 2 ** 16
const MAX_NAME = 256

const utf8 = new TextDecoder('utf-8', {fatal: true})

/**
 * The type objects of a CPython heap, each checked once: a word is a type when its own ob_type is
 * `type` (PyType_Type, whose ob_type is itself) or a proven metatype (a type with
 * Py_TPFLAGS_TYPE_SUBCLASS), within a few steps; it is READY; its tp_name is a printable UTF-8 C
 * string; its sizes are plausible; and it lies where such a type can: a heap type (HEAPTYPE) at
 * +16 of a live block (its GC header first), a static type in a module's image.
 */
export class PyTypes {
  private readonly known = new Map<number, PyType | null>()

  constructor(
    private readonly memory: AddressSpace,
    /** C strings at process addresses, from the core or the module files (tp_name is in .rodata). */
    private readonly readCString: (address: number, max: number) => string | undefined,
    readonly typeType: number,
    private readonly isHeapTypePlace: (address: number) => boolean,
    private readonly isStaticPlace: (address: number) => boolean,
  ) {}

  /** The type at an address, or null when the words there do not prove one. */
  at(address: number, depth = 0): PyType | null {
    const seen = this.known.get(address)
    if (seen !== undefined) return seen
    if (depth > META_DEPTH) return null
    // Marked first: a cycle of ob_type words that is not `type` itself ends here, unproven.
    this.known.set(address, null)
    const t = this.prove(address, depth)
    this.known.set(address, t)
    return t
  }

  /** Whether `t` is `base` or derives from it along tp_base. */
  isSubtype(t: PyType, base: number): boolean {
    let a = t.address
    for (let i = 0; i < BASE_DEPTH && a !== 0; i++) {
      if (a === base) return true
      const next = this.at(a)
      if (!next) return false
      a = next.base
    }
    return false
  }

  private prove(address: number, depth: number): PyType | null {
    if (address === 0 || address % 8 !== 0) return null
    const m = this.memory
    // The type's own fields first: they fail fast on the many words that are no type at all.
    const flags = m.readU64(address + TP_FLAGS)
    const basicsize = m.readU64(address + TP_BASICSIZE)
    const itemsize = m.readU64(address + TP_ITEMSIZE)
    if (flags === undefined || basicsize === undefined || itemsize === undefined) return null
    if (!hasFlag(flags, TPFLAGS_READY) || basicsize < 16 || basicsize > MAX_BASICSIZE || itemsize > MAX_ITEMSIZE) return null
    const meta = m.readU64(address + OB_TYPE)
    const namePtr = m.readU64(address + TP_NAME)
    const base = m.readU64(address + TP_BASE)
    if (meta === undefined || namePtr === undefined || base === undefined) return null
    if (address === this.typeType) {
      if (meta !== address) return null
    } else {
      // `type` itself is proven too (its ob_type is itself), so every chain ends there.
      const mt = this.at(meta, depth + 1)
      if (!mt || !hasFlag(mt.flags, TPFLAGS_TYPE_SUBCLASS)) return null
    }
    if (hasFlag(flags, TPFLAGS_HEAPTYPE) ? !this.isHeapTypePlace(address) : !this.isStaticPlace(address)) return null
    const name = this.readName(namePtr)
    if (name === null) return null
    return {address, name, basicsize, itemsize, flags, base}
  }

  private readName(at: number): string | null {
    if (at === 0) return null
    const raw = this.readCString(at, MAX_NAME)
    if (raw === undefined || raw.length === 0) return null
    const bytes = Buffer.from(raw, 'latin1')
    for (const b of bytes) if (b < 0x20 || b === 0x7f) return null
    try {
      return utf8.decode(bytes)
    } catch {
      return null
    }
  }
}
