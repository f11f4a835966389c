/**
 * The processors toma reads cores of: what ELF calls each (e_machine), how NT_PRSTATUS lays out
 * its general registers, which of them are the program counter, stack pointer, frame pointer and
 * link register, where the thread pointer comes from, and the DWARF numbering CFI names registers
 * by. Everything that differs between x86-64 and aarch64 in a core's registers is said here once.
 */

export const EM_X86_64 = 62
export const EM_AARCH64 = 183

/** NT_ARM_TLS (linux/elf.h): one per thread, TPIDR_EL0 (the thread pointer) first. */
export const NT_ARM_TLS = 0x401
/** NT_ARM_PAC_MASK: one per thread, the data mask then the instruction mask of pointer authentication. */
export const NT_ARM_PAC_MASK = 0x406

export interface Architecture {
  /** The name toma prints. */
  name: 'x86-64' | 'aarch64'
  machine: number
  /** NT_PRSTATUS's pr_reg, in order (8 bytes each, from byte 112 of the note). */
  registerNames: readonly string[]
  pc: string
  sp: string
  framePointer: string
  /** The register a call leaves the return address in (aarch64's x30); null where the call pushes it (x86-64). */
  linkRegister: string | null
  /** Where the thread pointer is: a register of pr_reg, or the first word of a note of its own. */
  threadPointer: {register: string} | {note: number; noteName: string}
  /** DWARF register number n is named dwarfRegisters[n] (the psABI's numbering, as CFI uses it). */
  dwarfRegisters: readonly string[]
  /** Bytes below the stack pointer a leaf function may use without moving it (x86-64's red zone; AAPCS64 has none). */
  redZone: number
  /**
   * A lower bound on glibc's sizeof(struct pthread) here, for when libc's file (its
   * `_thread_db_sizeof_pthread`) is missing: a TLS root cut to it scans less, never past the block.
   */
  minPthreadSize: number
}

const X86_64_REGISTERS = [
  'r15', 'r14', 'r13', 'r12', 'rbp', 'rbx', 'r11', 'r10', 'r9', 'r8', 'rax', 'rcx', 'rdx', 'rsi', 'rdi',
  'orig_rax', 'rip', 'cs', 'eflags', 'rsp', 'ss', 'fs_base', 'gs_base', 'ds', 'es', 'fs', 'gs',
] as const

/** x86-64: user_regs_struct; fs_base is the thread pointer (System V x86-64 psABI §3.6.2 DWARF numbers, 16 = return address). */
export const X86_64: Architecture = {
  name: 'x86-64',
  machine: EM_X86_64,
  registerNames: X86_64_REGISTERS,
  pc: 'rip',
  sp: 'rsp',
  framePointer: 'rbp',
  linkRegister: null,
  threadPointer: {register: 'fs_base'},
  dwarfRegisters: ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'rip'],
  redZone: 128,
  // 2304 in glibc 2.17, 2368 in 2.36 (Debian 12's libc6-dbg: gdb's `p sizeof(struct pthread)`).
  minPthreadSize: 2048,
}

const AARCH64_X = Array.from({length: 31}, (_, i) => `x${i}`)

/**
 * aarch64: struct user_pt_regs (x0–x30, sp, pc, pstate); x29 is the frame pointer, x30 the link
 * register; TPIDR_EL0 is not in pr_reg but in NT_ARM_TLS (a QEMU-user core has none). DWARF for
 * the Arm 64-bit architecture: x0–x30 are 0–30, sp is 31, pc 32.
 */
export const AARCH64: Architecture = {
  name: 'aarch64',
  machine: EM_AARCH64,
  registerNames: [...AARCH64_X, 'sp', 'pc', 'pstate'],
  pc: 'pc',
  sp: 'sp',
  framePointer: 'x29',
  linkRegister: 'x30',
  threadPointer: {note: NT_ARM_TLS, noteName: 'NT_ARM_TLS'},
  dwarfRegisters: [...AARCH64_X, 'sp', 'pc'],
  redZone: 0,
  // 1856 in glibc 2.36 (Debian 12's libc6-dbg:arm64, gdb-multiarch's `p sizeof(struct pthread)`;
  // `_thread_db_sizeof_pthread` 0x740): x86-64's 2368 less 512, the difference of the header
  // union that begins the struct (`ptype/o`: x86-64's tcbhead_t, 704 bytes; aarch64's padding,
  // 192), the rest being the same fields. So x86-64's bound less 512, the same 320 below 2.36;
  // other aarch64 glibcs are not measured here.
  minPthreadSize: 1536,
}

export const ARCHITECTURES: readonly Architecture[] = [X86_64, AARCH64]

export function architectureOf(machine: number): Architecture | undefined {
  return ARCHITECTURES.find(a => a.machine === machine)
}

/** The index in pr_reg of a register of `arch` (-1 when it has none of that name). */
export function registerIndex(arch: Architecture, name: string): number {
  return arch.registerNames.indexOf(name)
}
