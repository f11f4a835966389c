import {
  ELF64_SYM_SIZE, SHN_UNDEF, STB_GLOBAL, STB_LOCAL, STB_WEAK, STT_FUNC, STT_GNU_IFUNC, STT_OBJECT,
  STT_SECTION, STT_FILE, STT_TLS, SHT_NOBITS,
} from './constants.js'
import {cString, type ElfSection} from './headers.js'
import {u64le} from '../util/u64le.js'

export interface ElfSymbol { name: string; value: number; size: number; type: number /* STT_* */; bind: number /* STB_* */; shndx: number }

/** A parsed symbol plus what lookups need to rank duplicates; never leaves this layer. */
interface Entry {
  sym: ElfSymbol
  /** lower ranks win among same-named symbols: .symtab over .dynsym, global over local, default version over hidden */
  rank: number
}

/**
 * Reads every entry of one SHT_SYMTAB/SHT_DYNSYM section (Elf64_Sym: st_name u32, st_info u8,
 * st_other u8, st_shndx u16, st_value u64, st_size u64). `versym`, for .dynsym, is the matching
 * .gnu.version array; a set bit 15 marks a non-default (hidden) version such as memcpy@GLIBC_2.2.5.
 * Bounds come from the section header; a string offset outside the string table gives ''.
 */
export function readSymbolTable(buf: Buffer, table: ElfSection, strtab: ElfSection | undefined,
  versym?: ElfSection): {sym: ElfSymbol; hidden: boolean}[] {
  const out: {sym: ElfSymbol; hidden: boolean}[] = []
  const count = Math.floor(table.size / ELF64_SYM_SIZE)
  if (strtab && strtab.type === SHT_NOBITS) strtab = undefined
  const strStart = strtab?.offset ?? 0, strEnd = strtab ? strtab.offset + strtab.size : 0
  const versymCount = versym ? Math.floor(versym.size / 2) : 0
  for (let i = 1; i < count; i++) {
    const at = table.offset + i * ELF64_SYM_SIZE
    const nameOff = buf.readUInt32LE(at)
    const info = buf[at + 4]
    const sym: ElfSymbol = {
      name: strtab && nameOff < strtab.size ? cString(buf, strStart + nameOff, strEnd) : '',
      value: u64le(buf, at + 8),
      size: u64le(buf, at + 16),
      type: info & 0xf,
      bind: info >> 4,
      shndx: buf.readUInt16LE(at + 6),
    }
    const hidden = versym !== undefined && i < versymCount && (buf.readUInt16LE(versym.offset + 2 * i) & 0x8000) !== 0
    out.push({sym, hidden})
  }
  return out
}

function bindRank(bind: number): number {
  return bind === STB_GLOBAL ? 0 : bind === STB_WEAK ? 1 : bind === STB_LOCAL ? 3 : 2
}

/** Negative when `a` is the plainer of two aliases: fewer leading underscores, then shorter, then smaller. */
function aliasOrder(a: string, b: string): number {
  const ua = a.length - a.replace(/^_+/, '').length, ub = b.length - b.replace(/^_+/, '').length
  return ua - ub || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}

function isCodeOrData(type: number): boolean {
  return type === STT_FUNC || type === STT_OBJECT || type === STT_GNU_IFUNC
}

/**
 * Name and address lookups over .symtab and .dynsym together. Built once from the raw tables;
 * each index (by name, by sorted name, by address) is built on first use and kept.
 */
export class SymbolIndex {
  private readonly entries: Entry[] = []
  private byNameMap?: Map<string, ElfSymbol>
  private sortedNames?: ElfSymbol[]
  private byAddress?: {syms: ElfSymbol[]; maxEnd: Float64Array}

  /**
   * `tables` in preference order (a separate debug file's .symtab, the own .symtab, then .dynsym).
   * Undefined symbols (shndx 0), nameless ones and STT_SECTION/STT_FILE entries are dropped.
   */
  constructor(tables: {sym: ElfSymbol; hidden: boolean}[][]) {
    tables.forEach((table, t) => {
      for (const {sym, hidden} of table) {
        if (sym.shndx === SHN_UNDEF || sym.name === '' || sym.type === STT_SECTION || sym.type === STT_FILE) continue
        this.entries.push({sym, rank: t * 16 + bindRank(sym.bind) * 2 + (hidden ? 1 : 0)})
      }
    })
  }

  get size(): number {
    return this.entries.length
  }

  byName(name: string): ElfSymbol | undefined {
    if (!this.byNameMap) {
      const best = new Map<string, Entry>()
      for (const e of this.entries) {
        const had = best.get(e.sym.name)
        if (!had || e.rank < had.rank) best.set(e.sym.name, e)
      }
      this.byNameMap = new Map([...best].map(([n, e]) => [n, e.sym]))
    }
    return this.byNameMap.get(name)
  }

  /** Symbols whose name starts with `prefix`, sorted by name (code-unit order), one per name+value. */
  byPrefix(prefix: string): ElfSymbol[] {
    if (!this.sortedNames) {
      const seen = new Set<string>()
      const list: ElfSymbol[] = []
      for (const e of [...this.entries].sort((a, b) => a.rank - b.rank)) {
        const key = e.sym.name + '\0' + e.sym.value
        if (seen.has(key)) continue
        seen.add(key)
        list.push(e.sym)
      }
      list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.value - b.value))
      this.sortedNames = list
    }
    const list = this.sortedNames
    let lo = 0, hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (list[mid].name < prefix) lo = mid + 1
      else hi = mid
    }
    const out: ElfSymbol[] = []
    for (let i = lo; i < list.length && list[i].name.startsWith(prefix); i++) out.push(list[i])
    return out
  }

  /**
   * The FUNC/OBJECT/IFUNC symbol for a link-time address: the innermost one whose
   * [value, value+size) holds it, or a size-0 one exactly at it. Never the nearest symbol below:
   * past a symbol's end lies something the table does not name (a static function of a stripped
   * library, padding, another object), and naming it after its neighbour misleads.
   */
  at(vaddr: number): {symbol: ElfSymbol; offset: number} | undefined {
    const {syms, maxEnd} = this.addressIndex()
    // last index with value <= vaddr
    let lo = 0, hi = syms.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (syms[mid].value <= vaddr) lo = mid + 1
      else hi = mid
    }
    const last = lo - 1
    if (last < 0) return undefined
    // containing: walk down while some earlier symbol could still reach vaddr
    for (let i = last; i >= 0 && maxEnd[i] > vaddr; i--) {
      const s = syms[i]
      if (s.size > 0 && vaddr < s.value + s.size) return {symbol: s, offset: vaddr - s.value}
    }
    for (let i = last; i >= 0 && syms[i].value === vaddr; i--) {
      if (syms[i].size === 0) return {symbol: syms[i], offset: 0}
    }
    return undefined
  }

  /** The thread-local variable (STT_TLS) holding `offset` of the module's TLS block, with the offset into it (a linear search: few lookups, few such symbols). */
  tlsAt(offset: number): {symbol: ElfSymbol; offset: number} | undefined {
    let best: Entry | undefined
    for (const e of this.entries) {
      const s = e.sym
      if (s.type === STT_TLS && offset >= s.value && offset < s.value + Math.max(1, s.size) && (!best || e.rank < best.rank)) best = e
    }
    return best ? {symbol: best.sym, offset: offset - best.sym.value} : undefined
  }

  private addressIndex(): {syms: ElfSymbol[]; maxEnd: Float64Array} {
    if (!this.byAddress) {
      const seen = new Map<string, Entry>()
      for (const e of this.entries) {
        if (!isCodeOrData(e.sym.type)) continue
        const key = e.sym.name + '\0' + e.sym.value
        const had = seen.get(key)
        if (!had || e.rank < had.rank) seen.set(key, e)
      }
      const ranked = [...seen.values()]
      // Equal addresses: the walk in at() goes downwards, so the preferred symbol must sort last:
      // smaller size (innermost), then better rank, then the plainer alias (malloc over __libc_malloc).
      ranked.sort((a, b) => a.sym.value - b.sym.value || b.sym.size - a.sym.size || b.rank - a.rank ||
        aliasOrder(b.sym.name, a.sym.name))
      const syms = ranked.map(e => e.sym)
      const maxEnd = new Float64Array(syms.length)
      let m = 0
      syms.forEach((s, i) => {
        m = Math.max(m, s.value + s.size)
        maxEnd[i] = m
      })
      this.byAddress = {syms, maxEnd}
    }
    return this.byAddress
  }
}
