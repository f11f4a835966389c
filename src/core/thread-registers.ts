import type {Note} from './notes.js'
import {NT_PRSTATUS} from './notes.js'

/** x86-64 `user_regs_struct` order, as NT_PRSTATUS stores it. */
export const REGISTER_NAMES = [
  'r15', 'r14', 'r13', 'r12', 'rbp', 'rbx', 'r11', 'r10', 'r9', 'r8', 'rax', 'rcx', 'rdx', 'rsi', 'rdi',
  'orig_rax', 'rip', 'cs', 'eflags', 'rsp', 'ss', 'fs_base', 'gs_base', 'ds', 'es', 'fs', 'gs',
] as const
export type RegisterName = (typeof REGISTER_NAMES)[number]

const PR_REG_OFFSET = 112
const PR_PID_OFFSET = 32
const PRSTATUS_SIZE = PR_REG_OFFSET + REGISTER_NAMES.length * 8

export interface Thread {
  tid: number
  /** The signal the thread had pending when dumped (pr_cursig). */
  signal: number
  /** All general registers, exact 64-bit values in user_regs_struct order. */
  registers: BigUint64Array
  rip: number
  rsp: number
  /** fs_base is the thread's pthread_t on x86-64 glibc: allocators key per-thread state by it. */
  fsBase: number
}

export function register(thread: Thread, name: RegisterName): bigint {
  return thread.registers[REGISTER_NAMES.indexOf(name)]!
}

export function parseThreads(notes: Note[]): Thread[] {
  const threads: Thread[] = []
  for (const note of notes) {
    if (note.type !== NT_PRSTATUS || note.name !== 'CORE' || note.desc.length < PRSTATUS_SIZE) continue
    const d = note.desc
    const registers = new BigUint64Array(REGISTER_NAMES.length)
    for (let i = 0; i < REGISTER_NAMES.length; i++) registers[i] = d.readBigUInt64LE(PR_REG_OFFSET + i * 8)
    const num = (name: RegisterName) => Number(registers[REGISTER_NAMES.indexOf(name)]!)
    threads.push({
      tid: d.readInt32LE(PR_PID_OFFSET),
      signal: d.readInt16LE(12),
      registers,
      rip: num('rip'),
      rsp: num('rsp'),
      fsBase: num('fs_base'),
    })
  }
  return threads
}
