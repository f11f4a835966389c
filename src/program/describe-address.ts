import {hex} from '../errors.js'
import {demangle} from '../elf/demangle.js'
import {describeSymbolic, type Program} from './program.js'

/** What a non-heap address is, for people: a thread's stack, a module's bytes, anonymous memory. */
export type AddressPlace =
  | {kind: 'stack'; tid: number; offsetFromRsp: number; mapping: [number, number]}
  /** `symbol` demangled; `section` (`.bss`, …) when no symbol holds the address; offset from either, else from the module base */
  | {kind: 'module'; module: string; symbol: string | null; section: string | null; offset: number; label: string}
  | {kind: 'anonymous'; mapping: [number, number]}
  | {kind: 'unmapped'}

export function describeAddress(program: Program, addr: number): AddressPlace {
  const core = program.core
  const seg = core.memory.segmentAt(addr)
  const thread = seg ? core.threads.find(t => t.sp >= seg.start && t.sp < seg.end) : undefined
  if (seg && thread) return {kind: 'stack', tid: thread.tid, offsetFromRsp: addr - thread.sp, mapping: [seg.start, seg.end]}
  const sym = program.symbolize(addr)
  if (sym) {
    return {
      kind: 'module', module: sym.module.module.path, symbol: sym.symbol ? demangle(sym.symbol.name) : null,
      section: sym.section, offset: sym.offset, label: describeSymbolic(sym),
    }
  }
  if (seg) return {kind: 'anonymous', mapping: [seg.start, seg.end]}
  return {kind: 'unmapped'}
}

/** `sp`: the stack pointer's name on the core's processor (Architecture.sp: rsp, sp). */
export function placeLabel(p: AddressPlace, sp: string): string {
  switch (p.kind) {
    case 'stack':
      return `stack of thread ${p.tid}, ${sp}${p.offsetFromRsp >= 0 ? '+' : '-'}0x${Math.abs(p.offsetFromRsp).toString(16)}`
    case 'module':
      return p.label
    case 'anonymous':
      return `anonymous mapping ${hex(p.mapping[0])}-${hex(p.mapping[1])}`
    case 'unmapped':
      return 'not mapped in the core'
  }
}

/** People's label for a root: a register, a stack slot, or a global with its symbol. */
export function rootLabel(program: Program, r: {kind: string; thread: number | null; address: number}): string {
  if (r.kind === 'register') return `thread ${r.thread} register ${program.core.arch.registerNames[r.address] ?? r.address}`
  return placeLabel(describeAddress(program, r.address), program.core.arch.sp)
}
