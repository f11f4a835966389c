import {DW_RA, DW_RBP, DW_RSP, ModuleCfi, evaluateExpression, type FrameRow} from '../elf/cfi.js'
import type {ElfFile} from '../elf/elf-file.js'
import {REGISTER_NAMES, type Thread} from '../core/thread-registers.js'
import type {Program} from './program.js'

/** DWARF register n is user_regs_struct's REGISTER_NAMES index DWARF_TO_PRSTATUS[n]. */
const DWARF_TO_PRSTATUS = ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'rip'].map(n =>
  REGISTER_NAMES.indexOf(n as (typeof REGISTER_NAMES)[number]),
)
const MAX_FRAMES = 1024

export type FrameHow = 'registers' | 'cfi' | 'frame-pointer'

export interface Frame {
  level: number
  /** The frame's code address: the thread's rip for frame 0, a return address above it. */
  pc: number
  /** Canonical frame address (the stack pointer before the call into this frame), as gdb's "frame at". */
  cfa: number
  /** The stack pointer in this frame. */
  sp: number
  /** How this frame's registers were recovered: from the core's note (frame 0), by its callee's CFI, or by the frame-pointer chain. */
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
  const stack = program.core.memory.segmentAt(thread.rsp)
  const inStack = (a: number) => stack !== undefined && a >= stack.start && a < stack.end
  let regs: Array<bigint | undefined> = DWARF_TO_PRSTATUS.map(i => thread.registers[i])
  const frames: Frame[] = []
  let how: FrameHow = 'registers'
  let exactPc = true
  for (let level = 0; level < MAX_FRAMES; level++) {
    const pc = Number(regs[DW_RA]!)
    const sp = Number(regs[DW_RSP]!)
    // A return address points after the call: look up the call itself, unless this frame was interrupted.
    const lookup = exactPc ? pc : pc - 1
    const row = rowAt(program, lookup)
    let cfa: number | undefined
    let caller: Array<bigint | undefined> | undefined
    let signalFrame = false
    if (row) {
      cfa = cfaOf(row, regs, memory.readU64.bind(memory))
      if (cfa !== undefined) caller = callerRegisters(row, regs, cfa, memory.readU64.bind(memory))
      signalFrame = row.signalFrame
    } else if (regs[DW_RBP] !== undefined && inStack(Number(regs[DW_RBP])) && Number(regs[DW_RBP]) >= sp) {
      // No CFI here: trust the frame-pointer chain (saved rbp at rbp, return address above it).
      const rbp = Number(regs[DW_RBP])
      const savedRbp = memory.readU64(rbp)
      const ra = memory.readU64(rbp + 8)
      if (savedRbp !== undefined && ra !== undefined) {
        cfa = rbp + 16
        caller = [...regs]
        caller[DW_RBP] = BigInt(savedRbp)
        caller[DW_RA] = BigInt(ra)
      }
    }
    if (cfa === undefined) {
      frames.push({level, pc, cfa: sp, sp, how, signalFrame})
      return {frames, stop: row ? 'its CFA rule could not be evaluated' : `no call-frame information at ${hex(pc)} and no frame pointer into the stack`}
    }
    frames.push({level, pc, cfa, sp, how, signalFrame})
    if (!caller) return {frames, stop: 'the caller\'s registers could not be read'}
    const ra = caller[DW_RA]
    if (ra === undefined) return {frames, stop: 'outermost frame (its return address is undefined)'}
    if (ra === 0n) return {frames, stop: 'outermost frame (return address 0)'}
    caller[DW_RSP] = BigInt(cfa)
    if (!signalFrame && cfa <= sp) return {frames, stop: `the stack does not grow at ${hex(pc)} (CFA ${hex(cfa)} ≤ sp ${hex(sp)})`}
    if (!program.core.moduleAt(Number(ra)) && !signalFrame) return {frames, stop: `return address ${hex(Number(ra))} is in no module`}
    how = row ? 'cfi' : 'frame-pointer'
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
function callerRegisters(row: FrameRow, regs: Array<bigint | undefined>, cfa: number, readU64: (a: number) => number | undefined): Array<bigint | undefined> | undefined {
  const out = [...regs]
  const read = (a: number) => {
    const v = readU64(a)
    return v === undefined ? undefined : BigInt(v)
  }
  for (let reg = 0; reg < row.registers.length; reg++) {
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
        if (out[reg] === undefined && reg === DW_RA) return undefined
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
  if (row.returnAddressRegister !== DW_RA) out[DW_RA] = row.returnAddressRegister < out.length ? out[row.returnAddressRegister] : undefined
  else if (!row.registers[DW_RA]) out[DW_RA] = undefined
  return out
}

const hex = (n: number) => `0x${n.toString(16)}`
