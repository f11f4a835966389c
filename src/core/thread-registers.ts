import type {Note} from './notes.js'
import {NT_PRSTATUS} from './notes.js'
import {NT_ARM_PAC_MASK, registerIndex, type Architecture} from './arch.js'

const PR_REG_OFFSET = 112
const PR_PID_OFFSET = 32

export interface Thread {
  tid: number
  /** The signal the thread had pending when dumped (pr_cursig). */
  signal: number
  /** All general registers, exact 64-bit values in the architecture's pr_reg order (Architecture.registerNames). */
  registers: BigUint64Array
  /** The program counter (x86-64 rip). */
  pc: number
  /** The stack pointer (x86-64 rsp). */
  sp: number
  /**
   * The thread pointer (x86-64 fs_base, aarch64 TPIDR_EL0), or null when the core does not record
   * it (an aarch64 core without NT_ARM_TLS, as QEMU writes them). Allocators key per-thread state by it.
   */
  threadPointer: number | null
  /** Pointer authentication's instruction mask (NT_ARM_PAC_MASK): the bits a return address carries a signature in. */
  pacInstructionMask: bigint | null
}

/**
 * A code address as the thread's code sees it, with pointer authentication's signature taken off
 * (aarch64 with PAC signs return addresses in the bits of the instruction mask); unchanged where
 * the core records no mask. The one place return addresses are stripped.
 */
export function codeAddress(thread: Thread, value: bigint): bigint {
  return thread.pacInstructionMask === null ? value : value & ~thread.pacInstructionMask
}

/**
 * One thread per NT_PRSTATUS note; the notes after it up to the next NT_PRSTATUS are its own (the
 * kernel writes each thread's register sets after its prstatus): NT_ARM_TLS, NT_ARM_PAC_MASK.
 */
export function parseThreads(notes: Note[], arch: Architecture): Thread[] {
  const count = arch.registerNames.length
  const size = PR_REG_OFFSET + count * 8
  const pcAt = registerIndex(arch, arch.pc)
  const spAt = registerIndex(arch, arch.sp)
  const tp = arch.threadPointer
  const tpAt = 'register' in tp ? registerIndex(arch, tp.register) : -1
  const threads: Thread[] = []
  let current: Thread | undefined
  for (const note of notes) {
    if (note.name === 'LINUX' && current) {
      if ('note' in tp && note.type === tp.note && note.desc.length >= 8) current.threadPointer = Number(note.desc.readBigUInt64LE(0))
      if (note.type === NT_ARM_PAC_MASK && note.desc.length >= 16) current.pacInstructionMask = note.desc.readBigUInt64LE(8)
      continue
    }
    if (note.type !== NT_PRSTATUS || note.name !== 'CORE') continue
    current = undefined
    if (note.desc.length < size) continue
    const d = note.desc
    const registers = new BigUint64Array(count)
    for (let i = 0; i < count; i++) registers[i] = d.readBigUInt64LE(PR_REG_OFFSET + i * 8)
    current = {
      tid: d.readInt32LE(PR_PID_OFFSET),
      signal: d.readInt16LE(12),
      registers,
      pc: Number(registers[pcAt]!),
      sp: Number(registers[spAt]!),
      threadPointer: tpAt >= 0 ? Number(registers[tpAt]!) : null,
      pacInstructionMask: null,
    }
    threads.push(current)
  }
  return threads
}
