import type {LoadedModule, Program} from '../program/program.js'
import {classOfVtableSymbol, demangle, typeOfTypeinfoName} from './demangle.js'
import {lastAtOrBelow} from '../util/search.js'
import {u64le} from '../util/u64le.js'

/**
 * Dynamic C++ types of heap objects from their first word, by the Itanium C++ ABI.
 *
 * A vtable is `[vcall/vbase offsets…][offset-to-top][typeinfo*][virtual functions…]` and an
 * object's vptr points at the address point, just after the typeinfo pointer. Only a primary vptr
 * (offset-to-top 0) names the object's class: the vptr of a secondary base (multiple inheritance)
 * has a negative offset-to-top and sits inside the object, not at its start.
 *
 * Two ways to a name:
 *  - 'symbol': the word lies in a `_ZTV…` symbol of some module (executable or library), at least
 *    16 bytes into it, with offset-to-top 0 and a typeinfo pointer before it; the class is the
 *    symbol's, demangled.
 *  - 'typeinfo': the word lies in a module mapping (stripped executables), offset-to-top is 0, the
 *    typeinfo's own vptr is the address point of one of libstdc++'s `__cxxabiv1::__class_type_info`
 *    family vtables, and the typeinfo's name string (`N3app5OrderE`) demangles to the class.
 *
 * Bytes come from the core first, else from the module file on disk (read-only file pages, such
 * as `.rodata` name strings, are often not dumped). Everything is untrusted: unreadable or
 * implausible data gives null, never an exception.
 */

export type HowNamed = 'symbol' | 'typeinfo'

export interface TypeNamerOptions {
  /**
   * Use `_ZTV` symbols of the module files (default true). False names by the typeinfo chain
   * alone, as for a stripped executable: for cross-checks and tests.
   */
  useSymbols?: boolean
}

interface Named {
  name: string
  how: HowNamed
}

/** A `_ZTV…` symbol as a range of process addresses. */
export interface VtableSymbol {
  /** The mangled symbol name (`_ZTVN3app5OrderE`). */
  symbol: string
  start: number
  end: number
  module: LoadedModule
}

/** libstdc++'s vtables of the type_info classes a class type's typeinfo can be an instance of. */
const CLASS_TYPEINFO_VTABLES = [
  '_ZTVN10__cxxabiv117__class_type_infoE',
  '_ZTVN10__cxxabiv120__si_class_type_infoE',
  '_ZTVN10__cxxabiv121__vmi_class_type_infoE',
]

/** Longest type-name string read (a mangled name; longer is taken as garbage). */
const MAX_NAME = 1024

export class TypeNamer {
  /** word → result, for words that point into some module or vtable symbol (few distinct values). */
  private readonly cache = new Map<number, Named | null>()
  private indexed = false
  private vtables: VtableSymbol[] = []
  private vtableStarts = new Float64Array(0)
  /** Process addresses of `_ZTI…` symbols (typeinfo objects) of every module. */
  private typeinfoSymbols = new Set<number>()
  /** Address points (symbol + 16) of the class_type_info vtables. */
  private typeinfoVtables = new Set<number>()
  private mappingStarts = new Float64Array(0)
  private mappingEnds = new Float64Array(0)
  /** The last gap between module mappings an address fell in (empty until then). */
  private gapStart = 0
  private gapEnd = 0
  private readonly scratch = Buffer.alloc(8)

  private readonly useSymbols: boolean

  constructor(private readonly program: Program, options: TypeNamerOptions = {}) {
    this.useSymbols = options.useSymbols ?? true
  }

  /** Demangles any mangled symbol name; returns the input if it is not mangled. */
  static demangle(name: string): string {
    return demangle(name)
  }

  /**
   * The class whose primary vtable has its address point at `word` (the first 8 bytes of a heap
   * object), e.g. "app::Order", "app::Box<int>"; else null.
   */
  classOfVtablePointer(word: number): string | null {
    return this.lookup(word)?.name ?? null
  }

  /** How the class of `word` was found: a `_ZTV` symbol or the typeinfo chain; null if it has none. */
  howNamed(word: number): HowNamed | null {
    return this.lookup(word)?.how ?? null
  }

  /** The `_ZTV…` symbol whose range holds `addr` (any address inside a vtable group), or null. */
  vtableSymbolAt(addr: number): VtableSymbol | null {
    this.buildIndex()
    if (!Number.isFinite(addr)) return null
    const lo = lastAtOrBelow(this.vtableStarts, addr) + 1
    // Aliases may share a start: any of the symbols at or below addr whose range holds it.
    for (let i = lo - 1; i >= 0 && i >= lo - 8; i--) {
      const v = this.vtables[i]!
      if (addr < v.end) return v
    }
    return null
  }

  private lookup(word: number): Named | null {
    if (!Number.isSafeInteger(word) || word < 16 || word % 8 !== 0) return null
    const had = this.cache.get(word)
    if (had !== undefined) return had
    this.buildIndex()
    // Looked up by the typeinfo slot, which is inside the symbol even when the address point is
    // its very end (a class with virtual bases and no virtual functions: [vbase][0][typeinfo]).
    const vtable = this.vtableSymbolAt(word - 8)
    // Words pointing nowhere near a module (heap, stack, integers) are the common case: answer
    // without caching, so the cache stays as small as the set of module addresses seen.
    if (!vtable && !this.inModuleMapping(word)) return null
    let result: Named | null
    try {
      result = vtable ? this.bySymbol(word, vtable) : this.byTypeinfo(word)
    } catch {
      result = null
    }
    this.cache.set(word, result)
    return result
  }

  /** Case 1: `word` lies in a `_ZTV` symbol. */
  private bySymbol(word: number, vtable: VtableSymbol): Named | null {
    if (word - vtable.start < 16 || word > vtable.end) return null
    if (this.readWord(word - 16) !== 0) return null
    const ti = this.readWord(word - 8)
    if (ti === undefined) return null
    if (ti === 0) {
      // -fno-rtti: no typeinfo, so only the symbol's own primary address point is trusted.
      if (word - vtable.start !== 16) return null
    } else if (!this.typeinfoSymbols.has(ti) && !this.isClassTypeinfo(ti)) {
      return null
    }
    const name = classOfVtableSymbol(vtable.symbol)
    if (name !== null) return {name, how: 'symbol'}
    const viaTypeinfo = ti !== 0 ? this.typeinfoName(ti) : null
    return viaTypeinfo !== null ? {name: viaTypeinfo, how: 'typeinfo'} : null
  }

  /** Case 2: no symbol; follow vptr → typeinfo → name string. */
  private byTypeinfo(word: number): Named | null {
    if (this.readWord(word - 16) !== 0) return null
    const ti = this.readWord(word - 8)
    if (ti === undefined || ti === 0 || !this.isClassTypeinfo(ti)) return null
    const name = this.typeinfoName(ti)
    return name !== null ? {name, how: 'typeinfo'} : null
  }

  /** A class type's `std::type_info`: its own vptr is a `__class_type_info`-family address point. */
  private isClassTypeinfo(ti: number): boolean {
    if (!Number.isSafeInteger(ti) || ti % 8 !== 0) return false
    const vptr = this.readWord(ti)
    return vptr !== undefined && this.typeinfoVtables.has(vptr)
  }

  /** The demangled type a type_info names (its second word points at the mangled name). */
  private typeinfoName(ti: number): string | null {
    const namePtr = this.readWord(ti + 8)
    if (namePtr === undefined || namePtr === 0 || !Number.isSafeInteger(namePtr)) return null
    const mangled = this.readCString(namePtr)
    return mangled === undefined ? null : typeOfTypeinfoName(mangled)
  }

  // ---------------------------------------------------------------- reads: core, else module file

  private readWord(addr: number): number | undefined {
    if (!Number.isSafeInteger(addr) || addr < 0) return undefined
    const v = this.program.core.memory.readU64(addr)
    if (v !== undefined) return v
    const m = this.program.moduleAt(addr)
    const buf = m?.file?.readVirtual(addr - m.module.loadBias, 8)
    if (!buf || buf.length < 8) return undefined
    buf.copy(this.scratch, 0, 0, 8)
    return u64le(this.scratch, 0)
  }

  private readCString(addr: number): string | undefined {
    if (!Number.isSafeInteger(addr) || addr < 0) return undefined
    const s = this.program.core.memory.readCString(addr, MAX_NAME)
    if (s !== undefined) return s
    const m = this.program.moduleAt(addr)
    return m?.file?.readCString(addr - m.module.loadBias, MAX_NAME) ?? undefined
  }

  // ---------------------------------------------------------------- indexes, built on first use

  private buildIndex(): void {
    if (this.indexed) return
    this.indexed = true
    const vtables: VtableSymbol[] = []
    for (const loaded of this.program.modules) {
      const file = loaded.file
      if (!file) continue
      const bias = loaded.module.loadBias
      for (const s of this.useSymbols ? file.symbolsByPrefix('_ZTV') : []) {
        if (s.size < 16) continue // at least offset-to-top and typeinfo
        vtables.push({symbol: s.name, start: s.value + bias, end: s.value + bias + s.size, module: loaded})
      }
      if (this.useSymbols) for (const s of file.symbolsByPrefix('_ZTI')) this.typeinfoSymbols.add(s.value + bias)
      for (const name of CLASS_TYPEINFO_VTABLES) {
        const s = file.symbolByName(name)
        if (s) this.typeinfoVtables.add(s.value + bias + 16)
      }
    }
    vtables.sort((a, b) => a.start - b.start || a.end - b.end)
    this.vtables = vtables
    this.vtableStarts = Float64Array.from(vtables, v => v.start)

    const ranges = this.program.core.modules.flatMap(m => m.mappings.map(f => [f.start, f.end] as const))
    ranges.sort((a, b) => a[0] - b[0])
    this.mappingStarts = Float64Array.from(ranges, r => r[0])
    this.mappingEnds = Float64Array.from(ranges, r => r[1])
  }

  /** Whether addr lies in a mapping of some module (where vtables are). */
  isModuleAddress(addr: number): boolean {
    this.buildIndex()
    return this.inModuleMapping(addr)
  }

  private inModuleMapping(addr: number): boolean {
    // Most words asked about are heap pointers, and the heap lies between two module mappings:
    // the gap the last such word fell in answers most of them without a search.
    if (addr >= this.gapStart && addr < this.gapEnd) return false
    const i = lastAtOrBelow(this.mappingStarts, addr)
    if (i >= 0 && addr < this.mappingEnds[i]!) return true
    this.gapStart = i >= 0 ? Math.max(this.mappingStarts[i]!, this.mappingEnds[i]!) : 0
    this.gapEnd = i + 1 < this.mappingStarts.length ? this.mappingStarts[i + 1]! : Infinity
    return false
  }
}
