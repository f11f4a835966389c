import {EM_AARCH64, EM_X86_64} from '../core/arch.js'
import {
  ELF64_RELA_SIZE, R_AARCH64_IRELATIVE, R_AARCH64_JUMP_SLOT, R_X86_64_GLOB_DAT, R_X86_64_IRELATIVE, R_X86_64_JUMP_SLOT, SHF_ALLOC, SHT_RELA, STB_LOCAL, STT_FUNC,
} from './constants.js'
import type {ElfSection} from './headers.js'
import {PLT_SUFFIX} from './symbol-version.js'
import type {ElfSymbol} from './symbols.js'
import {u64le} from '../util/u64le.js'

/** What a module file gives the stubs' reader: its machine, its sections, their bytes and a symbol table's entries (index i at i - 1, as readSymbolTable lists them). */
export interface PltSource {
  machine: number
  sections: ElfSection[]
  sectionData(section: ElfSection): Buffer
  symbolTable(table: ElfSection): ElfSymbol[]
}

/**
 * A PLT section's layout: where its stubs start and how far apart they are, and how a stub's GOT
 * slot is read from its bytes (undefined when they are not a stub's: the slot is never guessed
 * from the stub's position).
 */
interface PltLayout {
  section: string
  header: number
  stride: (section: ElfSection) => number | undefined
  /**
   * The relocations a stub's slot may have: a `.plt`/`.plt.sec` stub's is lazy (JUMP_SLOT), or an
   * ifunc's resolved at load (IRELATIVE, no symbol: bfd names it by its resolver, `*ABS*+0x…`);
   * a `.plt.got` one's is bound at load (GLOB_DAT).
   */
  slotRelocations: number[]
  gotSlot: (bytes: Buffer, at: number, end: number, address: number) => number | undefined
}

const X86_64: PltLayout[] = [
  // the lazy PLT: a 16-byte header (push, jmp to the resolver), then `jmp *slot(%rip); push n; jmp .plt`
  // (with IBT, the lazy entries only push and jump: their stubs are `.plt.sec`'s, and these decode to none)
  {section: '.plt', header: 16, stride: () => 16, slotRelocations: [R_X86_64_JUMP_SLOT, R_X86_64_IRELATIVE], gotSlot: x86JumpSlot},
  // IBT's second PLT: `endbr64; bnd jmp *slot(%rip)`, padded to 16
  {section: '.plt.sec', header: 0, stride: () => 16, slotRelocations: [R_X86_64_JUMP_SLOT, R_X86_64_IRELATIVE], gotSlot: x86JumpSlot},
  // stubs of functions whose address is also taken (`jmp *slot(%rip); xchg %ax,%ax`; 16 bytes with IBT): the slot is .got's
  {section: '.plt.got', header: 0, stride: s => (s.entsize === 8 || s.entsize === 16 ? s.entsize : undefined), slotRelocations: [R_X86_64_GLOB_DAT], gotSlot: x86JumpSlot},
]

const AARCH64: PltLayout[] = [
  // a 32-byte header (the lazy-binding entry), then `adrp x16, page; ldr x17, [x16, #lo]; add x16, x16, #lo; br x17`
  {section: '.plt', header: 32, stride: () => 16, slotRelocations: [R_AARCH64_JUMP_SLOT, R_AARCH64_IRELATIVE], gotSlot: aarch64JumpSlot},
]

/** A procedure-linkage stub at link-time addresses [start, start + size), named as bfd's synthetic symbols name it. */
export interface PltStub { start: number; size: number; name: string; sectionIndex: number }

/**
 * The PLT stubs of a module file, in address order, each named `symbol@plt` after the dynamic
 * relocation of the GOT slot its own instructions jump through (what gdb and objdump show: bfd's
 * synthetic symbols). A stub whose bytes do not decode to a jump through a slot, or whose slot
 * has no relocation of the kind the section's stubs use, or one without a symbol, is left out.
 * Each section is read once, and the stubs and relocations counted within its size (which the
 * headers' reader checked against the file's).
 */
export function readPltStubs(file: PltSource): PltStub[] {
  const layouts = file.machine === EM_X86_64 ? X86_64 : file.machine === EM_AARCH64 ? AARCH64 : []
  // First each stub's slot from its bytes, then only those slots' relocations: a large module's
  // .rela.dyn holds many relocations (RELATIVE ones mostly) and none of them is kept.
  const decoded: Array<{start: number; size: number; slot: number; relocations: number[]; sectionIndex: number}> = []
  for (const layout of layouts) {
    const sectionIndex = file.sections.findIndex(s => s.name === layout.section && (s.flags & SHF_ALLOC) !== 0)
    const section = file.sections[sectionIndex]
    const stride = section && layout.stride(section)
    if (!section || stride === undefined) continue
    const bytes = file.sectionData(section)
    for (let at = layout.header; at + stride <= bytes.length; at += stride) {
      const slot = layout.gotSlot(bytes, at, at + stride, section.addr + at)
      if (slot !== undefined) decoded.push({start: section.addr + at, size: stride, slot, relocations: layout.slotRelocations, sectionIndex})
    }
  }
  if (decoded.length === 0) return []
  const slots = relocatedSlots(file, new Set(decoded.map(d => d.slot)))
  const stubs: PltStub[] = []
  for (const d of decoded) {
    const relocation = slots.get(d.slot)
    if (relocation && d.relocations.includes(relocation.type)) stubs.push({start: d.start, size: d.size, name: relocation.name + PLT_SUFFIX, sectionIndex: d.sectionIndex})
  }
  return stubs.sort((a, b) => a.start - b.start)
}

/**
 * The stub holding a link-time address (`stubs` as readPltStubs lists them), as a symbol of its
 * own with the offset into it: a local function named `symbol@plt`, which no lookup by a real
 * symbol's name finds.
 */
export function pltStubAt(stubs: readonly PltStub[], vaddr: number): {symbol: ElfSymbol; offset: number} | undefined {
  let lo = 0, hi = stubs.length
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if (stubs[mid]!.start <= vaddr) lo = mid + 1
    else hi = mid
  }
  const stub = stubs[lo - 1]
  if (!stub || vaddr >= stub.start + stub.size) return undefined
  return {symbol: {name: stub.name, value: stub.start, size: stub.size, type: STT_FUNC, bind: STB_LOCAL, shndx: stub.sectionIndex}, offset: vaddr - stub.start}
}

/**
 * The first dynamic relocation of each of these GOT slots that names a symbol (or an ifunc's
 * resolver): its type and that name (Elf64_Rela: r_offset u64, r_info's type u32 then symbol index u32, r_addend).
 */
function relocatedSlots(file: PltSource, wanted: Set<number>): Map<number, {type: number; name: string}> {
  const slots = new Map<number, {type: number; name: string}>()
  for (const rela of file.sections) {
    if (rela.type !== SHT_RELA || (rela.flags & SHF_ALLOC) === 0) continue
    const area = file.sectionData(rela)
    let symbols: ElfSymbol[] | undefined
    for (let at = 0; at + ELF64_RELA_SIZE <= area.length; at += ELF64_RELA_SIZE) {
      const slot = u64le(area, at)
      if (!wanted.has(slot) || slots.has(slot)) continue
      const table = file.sections[rela.link]
      symbols ??= table ? file.symbolTable(table) : []
      // Entry 0 is the null symbol: an IRELATIVE relocation's, which bfd names `*ABS*`. A nonzero
      // addend follows the name as bfd writes it, `+0x…` (an ifunc's resolver; glibc 2.41's ld.so
      // entries have one too), read as the unsigned 64-bit word bfd prints.
      const sym = area.readUInt32LE(at + 12)
      const type = area.readUInt32LE(at + 8)
      const addend = area.readBigUInt64LE(at + 16)
      const name = sym > 0 ? (sym <= symbols.length ? symbols[sym - 1]!.name : '')
        : type === R_X86_64_IRELATIVE || type === R_AARCH64_IRELATIVE ? '*ABS*' : ''
      if (name !== '') slots.set(slot, {type, name: addend === 0n ? name : `${name}+0x${addend.toString(16)}`})
    }
  }
  return slots
}
/**
 * x86-64: the GOT slot of `[endbr64;] [bnd] jmp *disp(%rip)` (f3 0f 1e fa, f2, ff 25 disp32) at
 * the start of a stub: the address after the jump plus disp.
 */
function x86JumpSlot(bytes: Buffer, at: number, end: number, address: number): number | undefined {
  let p = at
  if (p + 4 <= end && bytes.readUInt32LE(p) === 0xfa1e0ff3) p += 4
  if (p < end && bytes[p] === 0xf2) p += 1
  if (p + 6 > end || bytes[p] !== 0xff || bytes[p + 1] !== 0x25) return undefined
  return address + (p - at) + 6 + bytes.readInt32LE(p + 2)
}

/**
 * aarch64: the GOT slot of `adrp x16, page; ldr x17, [x16, #lo]; add x16, x16, #lo; br x17`: the
 * adrp's page (relative to the stub's own page) plus the ldr's offset, which the add repeats.
 * Instruction words are 32-bit: the masks below are on them, never on an address.
 */
function aarch64JumpSlot(bytes: Buffer, at: number, end: number, address: number): number | undefined {
  if (at + 16 > end) return undefined
  const adrp = bytes.readUInt32LE(at), ldr = bytes.readUInt32LE(at + 4), add = bytes.readUInt32LE(at + 8), br = bytes.readUInt32LE(at + 12)
  if ((adrp & 0x9f00001f) >>> 0 !== 0x90000010 || (ldr & 0xffc003ff) >>> 0 !== 0xf9400211 ||
    (add & 0xffc003ff) >>> 0 !== 0x91000210 || br !== 0xd61f0220) return undefined
  const lo = ((ldr >>> 10) & 0xfff) * 8
  if (((add >>> 10) & 0xfff) !== lo) return undefined
  const pages = (((adrp >>> 5) & 0x7ffff) * 4 + ((adrp >>> 29) & 3))
  const signedPages = pages >= 0x100000 ? pages - 0x200000 : pages
  return address - (address % 4096) + signedPages * 4096 + lo
}
