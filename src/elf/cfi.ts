import type {ElfFile} from './elf-file.js'
import {lastAtOrBelow} from '../util/search.js'
import {ByteReader} from './byte-reader.js'

/**
 * Call-frame information of a module (`.eh_frame`, found through `.eh_frame_hdr`'s sorted
 * table): for a code address, the rules that give the caller's registers — the CFA (the value of
 * the stack pointer just before the call) and where each saved register and the return address
 * are. DWARF 5 §6.4 and the LSB's .eh_frame format. Everything is read from the module file by
 * link-time address and bounds-checked: a damaged table ends in `undefined`, never a throw.
 */

/** x86-64's DWARF stack pointer: the CFA rule before a CIE's instructions (which set their own). */
const DW_RSP = 7
/**
 * Rules are kept for DWARF registers below this: the general registers of every architecture
 * toma reads (core/arch.ts: x86-64's 0–16, aarch64's x0–x30, sp and pc, 0–32).
 */
const REGISTERS = 33

export type RegisterRule =
  | {kind: 'undefined'}
  | {kind: 'same'}
  | {kind: 'offset'; offset: number}
  | {kind: 'val-offset'; offset: number}
  | {kind: 'register'; register: number}
  | {kind: 'expression'; expr: Buffer}
  | {kind: 'val-expression'; expr: Buffer}

export type CfaRule = {kind: 'register'; register: number; offset: number} | {kind: 'expression'; expr: Buffer}

/** The unwind row for one code address. */
export interface FrameRow {
  cfa: CfaRule
  /** Rule per DWARF register 0..32 (cfi.ts REGISTERS); missing means "same value" for callee-saved, "undefined" otherwise. */
  registers: Array<RegisterRule | undefined>
  returnAddressRegister: number
  /** The frame is a signal trampoline (CIE augmentation 'S'): its caller's pc is exact, not a return address. */
  signalFrame: boolean
  /** Link-time address range of the FDE. */
  start: number
  end: number
}

interface Cie {
  codeAlign: number
  dataAlign: number
  returnAddressRegister: number
  fdeEncoding: number
  signalFrame: boolean
  hasAugmentationData: boolean
  initialInstructions: Buffer
}

const DW_EH_PE_omit = 0xff

/** A byte cursor over a buffer that knows the link-time address of its first byte. */
class Reader extends ByteReader {
  constructor(
    buf: Buffer,
    readonly vaddr: number,
  ) {
    super(buf, 0, buf.length, message => new CfiError(message))
  }
  /** A pointer in a DW_EH_PE encoding; `data` is the base for datarel (the .eh_frame_hdr start). */
  encoded(enc: number, data = 0): number {
    if (enc === DW_EH_PE_omit) return 0
    const here = this.vaddr + this.pos
    let v: number
    switch (enc & 0x0f) {
      case 0x00:
        v = this.u64()
        break
      case 0x01:
        v = this.uleb()
        break
      case 0x02:
        v = this.u16()
        break
      case 0x03:
        v = this.u32()
        break
      case 0x04:
        v = this.u64()
        break
      case 0x09:
        v = this.sleb()
        break
      case 0x0a:
        v = this.buf.readInt16LE(this.take(2))
        break
      case 0x0b:
        v = this.i32()
        break
      case 0x0c:
        v = this.i64()
        break
      default:
        throw new CfiError(`pointer encoding 0x${enc.toString(16)}`)
    }
    switch (enc & 0x70) {
      case 0x00:
        break
      case 0x10:
        v += here
        break
      case 0x30:
        v += data
        break
      default:
        throw new CfiError(`pointer application 0x${(enc & 0x70).toString(16)}`)
    }
    if (enc & 0x80) throw new CfiError('indirect pointer')
    return v
  }
}

export class CfiError extends Error {}

/** The call-frame information of one module file, parsed lazily and cached per CIE. */
export class ModuleCfi {
  private readonly table: {initial: Float64Array; fde: Float64Array} | null
  private readonly ehFrame: {vaddr: number; data: Buffer} | null
  private readonly cies = new Map<number, Cie | null>()

  constructor(readonly file: ElfFile) {
    const frame = file.section('.eh_frame')
    this.ehFrame = frame && frame.size > 0 ? {vaddr: frame.addr, data: file.sectionData(frame)} : null
    this.table = this.readHeaderTable()
  }

  get available(): boolean {
    return this.ehFrame !== null
  }

  /** The unwind row at a link-time code address, or undefined when no FDE covers it (or it is damaged). */
  rowAt(pc: number): FrameRow | undefined {
    try {
      const fde = this.fdeFor(pc)
      return fde === undefined ? undefined : this.row(fde, pc)
    } catch (e) {
      if (e instanceof CfiError) return undefined
      throw e
    }
  }

  /** The sorted (initial location, FDE address) table of .eh_frame_hdr, or null without one. */
  private readHeaderTable() {
    const hdr = this.file.section('.eh_frame_hdr')
    if (!hdr || !this.ehFrame) return null
    try {
      const r = new Reader(this.file.sectionData(hdr), hdr.addr)
      if (r.u8() !== 1) return null
      const framePtrEnc = r.u8()
      const countEnc = r.u8()
      const tableEnc = r.u8()
      r.encoded(framePtrEnc, hdr.addr)
      const count = r.encoded(countEnc, hdr.addr)
      if (tableEnc !== 0x3b || !(count >= 0) || r.pos + count * 8 > r.buf.length) return null
      const initial = new Float64Array(count)
      const fde = new Float64Array(count)
      for (let i = 0; i < count; i++) {
        initial[i] = r.i32() + hdr.addr
        fde[i] = r.i32() + hdr.addr
      }
      return {initial, fde}
    } catch (e) {
      if (e instanceof CfiError) return null
      throw e
    }
  }

  /** Link-time address of the FDE whose range holds pc. */
  private fdeFor(pc: number): number | undefined {
    if (this.table) {
      const {initial, fde} = this.table
      const at = lastAtOrBelow(initial, pc)
      return at >= 0 ? fde[at] : undefined
    }
    return this.scanForFde(pc)
  }

  /** Without .eh_frame_hdr: walk .eh_frame's entries in order. */
  private scanForFde(pc: number): number | undefined {
    const f = this.ehFrame
    if (!f) return undefined
    let at = 0
    for (let n = 0; at + 8 <= f.data.length && n < 1_000_000; n++) {
      const length = f.data.readUInt32LE(at)
      if (length === 0 || length === 0xffff_ffff) return undefined
      const id = f.data.readUInt32LE(at + 4)
      if (id !== 0) {
        const r = new Reader(f.data.subarray(at + 8, at + 4 + length), f.vaddr + at + 8)
        const cie = this.cieAt(f.vaddr + at + 4 - id)
        if (cie) {
          const start = r.encoded(cie.fdeEncoding)
          const range = r.encoded(cie.fdeEncoding & 0x0f)
          if (pc >= start && pc < start + range) return f.vaddr + at
        }
      }
      at += 4 + length
    }
    return undefined
  }

  private cieAt(vaddr: number): Cie | null {
    const cached = this.cies.get(vaddr)
    if (cached !== undefined) return cached
    let cie: Cie | null = null
    try {
      cie = this.parseCie(vaddr)
    } catch (e) {
      if (!(e instanceof CfiError)) throw e
    }
    this.cies.set(vaddr, cie)
    return cie
  }

  private entry(vaddr: number): Reader {
    const f = this.ehFrame!
    const at = vaddr - f.vaddr
    if (!(at >= 0 && at + 4 <= f.data.length)) throw new CfiError('entry outside .eh_frame')
    const length = f.data.readUInt32LE(at)
    if (length === 0xffff_ffff || at + 4 + length > f.data.length) throw new CfiError('bad entry length')
    return new Reader(f.data.subarray(at + 4, at + 4 + length), vaddr + 4)
  }

  private parseCie(vaddr: number): Cie {
    const r = this.entry(vaddr)
    if (r.u32() !== 0) throw new CfiError('not a CIE')
    const version = r.u8()
    const augmentation = r.cstring()
    if (version === 4) r.bytes(2) // address and segment selector sizes
    const codeAlign = r.uleb()
    const dataAlign = r.sleb()
    const returnAddressRegister = version === 1 ? r.u8() : r.uleb()
    let fdeEncoding = 0
    let signalFrame = false
    const hasAugmentationData = augmentation.startsWith('z')
    if (hasAugmentationData) {
      const length = r.uleb()
      const data = new Reader(r.bytes(length), r.vaddr + r.pos - length)
      for (const c of augmentation.slice(1)) {
        if (c === 'R') fdeEncoding = data.u8()
        else if (c === 'L') data.u8()
        else if (c === 'P') data.encoded(data.u8() & 0x7f)
        else if (c === 'S') signalFrame = true
        else if (c === 'B' || c === 'G') continue
        else break // unknown augmentation: the rest of the data is opaque, the instructions still follow
      }
    }
    for (const c of augmentation) if (c === 'S') signalFrame = true
    return {codeAlign, dataAlign, returnAddressRegister, fdeEncoding, signalFrame, hasAugmentationData, initialInstructions: r.buf.subarray(r.pos)}
  }

  private row(fdeVaddr: number, pc: number): FrameRow | undefined {
    const r = this.entry(fdeVaddr)
    const cieOffset = r.u32()
    if (cieOffset === 0) return undefined
    const cie = this.cieAt(fdeVaddr + 4 - cieOffset)
    if (!cie) return undefined
    const start = r.encoded(cie.fdeEncoding)
    const range = r.encoded(cie.fdeEncoding & 0x0f)
    if (!(pc >= start && pc < start + range)) return undefined
    if (cie.hasAugmentationData) r.bytes(r.uleb())
    const state = new CfaMachine(cie)
    state.run(cie.initialInstructions, Number.POSITIVE_INFINITY, start, true)
    state.run(r.buf.subarray(r.pos), pc, start, false)
    return {cfa: state.cfa, registers: state.registers, returnAddressRegister: cie.returnAddressRegister, signalFrame: cie.signalFrame, start, end: start + range}
  }
}

/** Executes CFA instructions up to a code address. */
class CfaMachine {
  cfa: CfaRule = {kind: 'register', register: DW_RSP, offset: 8}
  registers: Array<RegisterRule | undefined> = new Array(REGISTERS).fill(undefined)
  private initial: Array<RegisterRule | undefined> = []
  private readonly saved: Array<{cfa: CfaRule; registers: Array<RegisterRule | undefined>}> = []

  constructor(private readonly cie: Cie) {}

  run(code: Buffer, pc: number, start: number, isInitial: boolean): void {
    const r = new Reader(code, 0)
    let loc = start
    const set = (reg: number, rule: RegisterRule | undefined) => {
      if (reg < REGISTERS) this.registers[reg] = rule
    }
    for (let steps = 0; !r.atEnd && steps < 100_000; steps++) {
      const op = r.u8()
      const high = op & 0xc0
      const low = op & 0x3f
      if (high === 0x40) {
        loc += low * this.cie.codeAlign
        if (loc > pc) break
        continue
      }
      if (high === 0x80) {
        set(low, {kind: 'offset', offset: r.uleb() * this.cie.dataAlign})
        continue
      }
      if (high === 0xc0) {
        set(low, this.initial[low])
        continue
      }
      switch (op) {
        case 0x00:
          break
        case 0x01:
          loc = r.encoded(this.cie.fdeEncoding)
          break
        case 0x02:
          loc += r.u8() * this.cie.codeAlign
          break
        case 0x03:
          loc += r.u16() * this.cie.codeAlign
          break
        case 0x04:
          loc += r.u32() * this.cie.codeAlign
          break
        case 0x05:
          set(r.uleb(), {kind: 'offset', offset: r.uleb() * this.cie.dataAlign})
          break
        case 0x06: {
          const reg = r.uleb()
          set(reg, this.initial[reg])
          break
        }
        case 0x07:
          set(r.uleb(), {kind: 'undefined'})
          break
        case 0x08:
          set(r.uleb(), {kind: 'same'})
          break
        case 0x09: {
          const reg = r.uleb()
          set(reg, {kind: 'register', register: r.uleb()})
          break
        }
        case 0x0a:
          if (this.saved.length > 1000) throw new CfiError('remember_state too deep')
          this.saved.push({cfa: this.cfa, registers: [...this.registers]})
          break
        case 0x0b: {
          const s = this.saved.pop()
          if (!s) throw new CfiError('restore_state without remember_state')
          // DWARF: restore_state does not restore the CFA rule in older producers' view, but GCC and gdb do.
          this.cfa = s.cfa
          this.registers = s.registers
          break
        }
        case 0x0c:
          this.cfa = {kind: 'register', register: r.uleb(), offset: r.uleb()}
          break
        case 0x0d:
          this.cfa = {kind: 'register', register: r.uleb(), offset: this.cfa.kind === 'register' ? this.cfa.offset : 0}
          break
        case 0x0e:
          if (this.cfa.kind === 'register') this.cfa = {...this.cfa, offset: r.uleb()}
          else r.uleb()
          break
        case 0x0f:
          this.cfa = {kind: 'expression', expr: r.bytes(r.uleb())}
          break
        case 0x10: {
          const reg = r.uleb()
          set(reg, {kind: 'expression', expr: r.bytes(r.uleb())})
          break
        }
        case 0x11:
          set(r.uleb(), {kind: 'offset', offset: r.sleb() * this.cie.dataAlign})
          break
        case 0x12:
          this.cfa = {kind: 'register', register: r.uleb(), offset: r.sleb() * this.cie.dataAlign}
          break
        case 0x13:
          if (this.cfa.kind === 'register') this.cfa = {...this.cfa, offset: r.sleb() * this.cie.dataAlign}
          else r.sleb()
          break
        case 0x14:
          set(r.uleb(), {kind: 'val-offset', offset: r.uleb() * this.cie.dataAlign})
          break
        case 0x15:
          set(r.uleb(), {kind: 'val-offset', offset: r.sleb() * this.cie.dataAlign})
          break
        case 0x16: {
          const reg = r.uleb()
          set(reg, {kind: 'val-expression', expr: r.bytes(r.uleb())})
          break
        }
        case 0x2d:
          // AArch64's negate_ra_state: the return address is signed from here (pointer authentication);
          // its signature is taken off where the unwinder reads it (core/thread-registers.ts codeAddress).
          break
        case 0x2e:
          r.uleb() // GNU_args_size: the callee pops arguments; nothing for the unwind rules
          break
        case 0x2f:
          set(r.uleb(), {kind: 'offset', offset: -r.uleb() * this.cie.dataAlign})
          break
        default:
          throw new CfiError(`CFA instruction 0x${op.toString(16)}`)
      }
      if (loc > pc) break
    }
    if (isInitial) this.initial = [...this.registers]
  }
}

/** DW_OP_addr and DW_OP_const*: each reads its operand (exact to 64 bits; pushed modulo 2^64). */
const CONSTANTS: Record<number, (r: Reader) => bigint> = {
  0x03: r => r.bytes(8).readBigUInt64LE(0),
  0x08: r => BigInt(r.u8()),
  0x09: r => BigInt((r.u8() << 24) >> 24),
  0x0a: r => BigInt(r.u16()),
  0x0b: r => BigInt((r.u16() << 16) >> 16),
  0x0c: r => BigInt(r.u32()),
  0x0d: r => BigInt(r.i32()),
  0x0e: r => r.bytes(8).readBigUInt64LE(0),
  0x0f: r => r.bytes(8).readBigInt64LE(0),
  0x10: r => BigInt(r.uleb()),
  0x11: r => BigInt(r.sleb()),
}

/**
 * Evaluates a DWARF expression (the operations CFI uses: constants, registers, arithmetic,
 * comparisons, branches, dereferences). `initial` is pushed first (the CFA, for register rules).
 * Returns undefined for anything unsupported or unreadable.
 */
export function evaluateExpression(
  expr: Buffer,
  register: (n: number) => bigint | undefined,
  readU64: (addr: number) => number | undefined,
  initial?: bigint,
): bigint | undefined {
  const stack: bigint[] = initial === undefined ? [] : [initial]
  const M = (1n << 64n) - 1n
  const r = new Reader(expr, 0)
  const pop = (): bigint => {
    const v = stack.pop()
    if (v === undefined) throw new CfiError('expression stack underflow')
    return v
  }
  const signed = (v: bigint) => BigInt.asIntN(64, v)
  try {
    for (let steps = 0; !r.atEnd && steps < 10_000; steps++) {
      const op = r.u8()
      if (op >= 0x30 && op <= 0x4f) {
        stack.push(BigInt(op - 0x30))
        continue
      }
      const constant = CONSTANTS[op]
      if (constant) {
        stack.push(constant(r) & M)
        continue
      }
      if (op >= 0x50 && op <= 0x6f) {
        const v = register(op - 0x50)
        if (v === undefined) return undefined
        stack.push(v)
        continue
      }
      if (op >= 0x70 && op <= 0x8f) {
        const v = register(op - 0x70)
        if (v === undefined) return undefined
        stack.push((v + BigInt(r.sleb())) & M)
        continue
      }
      switch (op) {
        case 0x06:
        case 0x94: {
          const size = op === 0x94 ? r.u8() : 8
          const v = readU64(Number(pop()))
          if (v === undefined) return undefined
          stack.push(size >= 8 ? BigInt(v) : BigInt(v) & ((1n << BigInt(size * 8)) - 1n))
          break
        }
        case 0x12: {
          const v = pop()
          stack.push(v, v)
          break
        }
        case 0x13:
          pop()
          break
        case 0x14: {
          if (stack.length < 2) return undefined
          stack.push(stack[stack.length - 2]!)
          break
        }
        case 0x15: {
          const i = r.u8()
          if (i >= stack.length) return undefined
          stack.push(stack[stack.length - 1 - i]!)
          break
        }
        case 0x16: {
          const a = pop()
          const b = pop()
          stack.push(a, b)
          break
        }
        case 0x17: {
          const a = pop()
          const b = pop()
          const c = pop()
          stack.push(a, c, b)
          break
        }
        case 0x19: {
          const v = signed(pop())
          stack.push((v < 0n ? -v : v) & M)
          break
        }
        case 0x1a:
          stack.push(pop() & pop())
          break
        case 0x1b: {
          const b = signed(pop())
          const a = signed(pop())
          if (b === 0n) return undefined
          stack.push((a / b) & M)
          break
        }
        case 0x1c: {
          const b = pop()
          stack.push((pop() - b) & M)
          break
        }
        case 0x1d: {
          const b = pop()
          if (b === 0n) return undefined
          stack.push(pop() % b)
          break
        }
        case 0x1e:
          stack.push((pop() * pop()) & M)
          break
        case 0x1f:
          stack.push(-pop() & M)
          break
        case 0x20:
          stack.push(~pop() & M)
          break
        case 0x21:
          stack.push(pop() | pop())
          break
        case 0x22:
          stack.push((pop() + pop()) & M)
          break
        case 0x23:
          stack.push((pop() + BigInt(r.uleb())) & M)
          break
        case 0x24: {
          const b = pop()
          stack.push(b >= 64n ? 0n : (pop() << b) & M)
          break
        }
        case 0x25: {
          const b = pop()
          stack.push(b >= 64n ? 0n : pop() >> b)
          break
        }
        case 0x26: {
          const b = pop()
          stack.push(BigInt.asIntN(64, pop()) >> (b > 63n ? 63n : b) & M)
          break
        }
        case 0x27:
          stack.push(pop() ^ pop())
          break
        case 0x28: {
          const off = ((r.u16() << 16) >> 16)
          if (pop() !== 0n) r.pos += off
          if (r.pos < 0 || r.pos > r.buf.length) return undefined
          break
        }
        case 0x29:
        case 0x2a:
        case 0x2b:
        case 0x2c:
        case 0x2d:
        case 0x2e: {
          const b = signed(pop())
          const a = signed(pop())
          const t = op === 0x29 ? a === b : op === 0x2a ? a >= b : op === 0x2b ? a > b : op === 0x2c ? a <= b : op === 0x2d ? a < b : a !== b
          stack.push(t ? 1n : 0n)
          break
        }
        case 0x2f: {
          const off = ((r.u16() << 16) >> 16)
          r.pos += off
          if (r.pos < 0 || r.pos > r.buf.length) return undefined
          break
        }
        case 0x90: {
          const v = register(r.uleb())
          if (v === undefined) return undefined
          stack.push(v)
          break
        }
        case 0x92: {
          const v = register(r.uleb())
          if (v === undefined) return undefined
          stack.push((v + BigInt(r.sleb())) & M)
          break
        }
        case 0x96:
          break
        default:
          return undefined
      }
    }
  } catch (e) {
    if (e instanceof CfiError) return undefined
    throw e
  }
  return stack.pop()
}
