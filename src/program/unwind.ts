import {ModuleCfi, evaluateExpression, type FrameRow} from '../elf/cfi.js'
import type {ElfFile} from '../elf/elf-file.js'
import {codeAddress, type Thread} from '../core/thread-registers.js'
import {registerIndex, type Architecture} from '../core/arch.js'
import type {Program} from './program.js'
import {aarch64PltPlaceAt} from './plt-stub.js'

const MAX_FRAMES = 1024

/**
 * An architecture's registers as the unwinder numbers them (DWARF's): the slot holding each
 * frame's pc (x86-64's return address column rip, aarch64's pc), the stack and frame pointers, and
 * where pr_reg holds each DWARF register.
 */
interface DwarfRegisters {
  pc: number
  sp: number
  fp: number
  /** The link register (aarch64's x30), -1 where a call pushes the return address (x86-64). */
  lr: number
  toPrstatus: number[]
}

function dwarfRegisters(arch: Architecture): DwarfRegisters {
  const n = (name: string) => arch.dwarfRegisters.indexOf(name)
  return {pc: n(arch.pc), sp: n(arch.sp), fp: n(arch.framePointer), lr: arch.linkRegister === null ? -1 : n(arch.linkRegister), toPrstatus: arch.dwarfRegisters.map(r => registerIndex(arch, r))}
}

export type FrameHow = 'registers' | 'cfi' | 'frame-pointer' | 'link-register'

export interface Frame {
  level: number
  /** The frame's code address: the thread's rip for frame 0, a return address above it. */
  pc: number
  /** Canonical frame address (the stack pointer before the call into this frame), as gdb's "frame at". */
  cfa: number
  /** The stack pointer in this frame. */
  sp: number
  /**
   * How this frame's registers were recovered: from the core's note (frame 0), by its callee's
   * CFI, by the frame-pointer chain, or from the link register its callee, a PLT stub, left untouched.
   */
  how: FrameHow
  /** This frame is a signal trampoline (its caller was interrupted, not calling). */
  signalFrame: boolean
}

export interface Unwound {
  frames: Frame[]
  /** Why the walk ended: the outermost frame, or the first frame that could not be trusted. */
  stop: string
}

/** Caches each module file's parsed CFI. */
const cfiCache = new WeakMap<ElfFile, ModuleCfi>()
function cfiOf(file: ElfFile): ModuleCfi {
  let c = cfiCache.get(file)
  if (!c) cfiCache.set(file, (c = new ModuleCfi(file)))
  return c
}

const unwound = new WeakMap<Thread, Unwound>()

/**
 * Unwinds a thread from its registers, as a debugger does: the call-frame information of each
 * frame's module (from the module file on disk) gives the CFA and where its caller's registers
 * were saved; signal trampolines (`__restore_rt`, CIE augmentation 'S') hand over the interrupted
 * registers; a frame without CFI falls back to the frame-pointer chain when rbp points into the
 * stack above it. Stops at the outermost frame (its return address is undefined: `clone3`,
 * `_start`) or at the first frame that cannot be trusted, and says which. Unwound once per thread.
 */
export function unwindThread(program: Program, thread: Thread): Unwound {
  let u = unwound.get(thread)
  if (!u) unwound.set(thread, (u = unwind(program, thread)))
  return u
}

function unwind(program: Program, thread: Thread): Unwound {
  const memory = program.core.memory
  const stack = program.core.memory.segmentAt(thread.sp)
  const inStack = (a: number) => stack !== undefined && a >= stack.start && a < stack.end
  const {pc: DW_PC, sp: DW_SP, fp: DW_FP, lr: DW_LR, toPrstatus} = dwarfRegisters(program.core.arch)
  let regs: Array<bigint | undefined> = toPrstatus.map(i => thread.registers[i])
  const frames: Frame[] = []
  let how: FrameHow = 'registers'
  let exactPc = true
  for (let level = 0; level < MAX_FRAMES; level++) {
    const pc = Number(regs[DW_PC]!)
    const sp = Number(regs[DW_SP]!)
    // A return address points after the call: look up the call itself, unless this frame was interrupted.
    const lookup = exactPc ? pc : pc - 1
    const row = rowAt(program, lookup)
    let cfa: number | undefined
    let caller: Array<bigint | undefined> | undefined
    let signalFrame = false
    // An interrupted aarch64 frame in a PLT (no CFI there): a stub pushes nothing and branches with
    // x30 untouched, so its CFA is sp and its caller's pc x30, as gdb unwinds a pc in .plt. The
    // frame-pointer chain would skip that caller. The header pushes: not unwound (not known exactly).
    const plt = !row && exactPc && DW_LR >= 0 ? aarch64PltPlaceAt(program, pc) : undefined
    if (plt === 'header') {
      frames.push({level, pc, cfa: sp, sp, how, signalFrame})
      return {frames, stop: `${hex(pc)} is in the PLT's lazy-binding header, which pushes and has no call-frame information`}
    }
    if (plt === 'stub') {
      cfa = sp
      caller = [...regs]
      caller[DW_PC] = regs[DW_LR]
    } else if (row) {
      cfa = cfaOf(row, regs, memory.readU64.bind(memory))
      if (cfa !== undefined) caller = callerRegisters(row, regs, cfa, memory.readU64.bind(memory), DW_PC)
      signalFrame = row.signalFrame
    } else if (regs[DW_FP] !== undefined && inStack(Number(regs[DW_FP])) && Number(regs[DW_FP]) >= sp) {
      // No CFI here: trust the frame-pointer chain (saved rbp at rbp, return address above it; the
      // same on aarch64, whose frame record is x29 then x30).
      const rbp = Number(regs[DW_FP])
      const savedRbp = memory.readU64(rbp)
      const ra = memory.readU64(rbp + 8)
      if (savedRbp !== undefined && ra !== undefined) {
        cfa = rbp + 16
        caller = [...regs]
        caller[DW_FP] = BigInt(savedRbp)
        caller[DW_PC] = BigInt(ra)
      }
    }
    if (cfa === undefined) {
      frames.push({level, pc, cfa: sp, sp, how, signalFrame})
      return {frames, stop: row ? 'its CFA rule could not be evaluated' : `no call-frame information at ${hex(pc)} and no frame pointer into the stack`}
    }
    frames.push({level, pc, cfa, sp, how, signalFrame})
    if (!caller) return {frames, stop: 'the caller\'s registers could not be read'}
    const signed = caller[DW_PC]
    if (signed === undefined) return {frames, stop: 'outermost frame (its return address is undefined)'}
    // Signed (PAC bits 48-54), it is above 2^53 yet below 2^55 and 4-aligned: the number read holds it exactly.
    const ra = codeAddress(thread, signed)
    caller[DW_PC] = ra
    if (ra === 0n) return {frames, stop: 'outermost frame (return address 0)'}
    caller[DW_SP] = BigInt(cfa)
    // An interrupted frame (the innermost, or one a signal stopped) may be an aarch64 leaf: its
    // return address still in x30, nothing pushed, its CFA its sp. A call always grows the stack
    // below the caller (x86-64's pushes the return address), so any other frame's CFA is above sp.
    if (!signalFrame && (cfa < sp || (cfa === sp && !exactPc))) return {frames, stop: `the stack does not grow at ${hex(pc)} (CFA ${hex(cfa)} ≤ sp ${hex(sp)})`}
    if (!program.core.moduleAt(Number(ra)) && !signalFrame) return {frames, stop: `return address ${hex(Number(ra))} is in no module`}
    how = row ? 'cfi' : plt ? 'link-register' : 'frame-pointer'
    exactPc = signalFrame
    regs = caller
  }
  return {frames, stop: `stopped after ${MAX_FRAMES} frames`}
}

function rowAt(program: Program, pc: number): FrameRow | undefined {
  const loaded = program.moduleAt(pc)
  if (!loaded?.file) return undefined
  return cfiOf(loaded.file).rowAt(pc - loaded.module.loadBias)
}

function cfaOf(row: FrameRow, regs: Array<bigint | undefined>, readU64: (a: number) => number | undefined): number | undefined {
  if (row.cfa.kind === 'register') {
    const base = regs[row.cfa.register]
    return base === undefined ? undefined : Number(base) + row.cfa.offset
  }
  const v = evaluateExpression(row.cfa.expr, n => regs[n], readU64)
  return v === undefined ? undefined : Number(v)
}

/** The caller's registers by the row's rules; registers without a rule keep their value (gdb does the same). */
function callerRegisters(row: FrameRow, regs: Array<bigint | undefined>, cfa: number, readU64: (a: number) => number | undefined, DW_PC: number): Array<bigint | undefined> | undefined {
  const out = [...regs]
  const read = (a: number) => {
    const v = readU64(a)
    return v === undefined ? undefined : BigInt(v)
  }
  // Only the registers the core holds (x86-64's vector registers have DWARF numbers past rip).
  for (let reg = 0; reg < Math.min(row.registers.length, regs.length); reg++) {
    const rule = row.registers[reg]
    if (!rule) continue
    switch (rule.kind) {
      case 'undefined':
        out[reg] = undefined
        break
      case 'same':
        break
      case 'offset':
        out[reg] = read(cfa + rule.offset)
        if (out[reg] === undefined && reg === row.returnAddressRegister) return undefined
        break
      case 'val-offset':
        out[reg] = BigInt(cfa + rule.offset)
        break
      case 'register':
        out[reg] = regs[rule.register]
        break
      case 'expression': {
        const at = evaluateExpression(rule.expr, n => regs[n], readU64, BigInt(cfa))
        out[reg] = at === undefined ? undefined : read(Number(at))
        break
      }
      case 'val-expression':
        out[reg] = evaluateExpression(rule.expr, n => regs[n], readU64, BigInt(cfa))
        break
    }
  }
  // The return address register's rule gives the caller's pc.
  if (row.returnAddressRegister !== DW_PC) out[DW_PC] = row.returnAddressRegister < out.length ? out[row.returnAddressRegister] : undefined
  else if (!row.registers[DW_PC]) out[DW_PC] = undefined
  return out
}

const hex = (n: number) => `0x${n.toString(16)}`
