import type {Note} from './notes.js'
import {NT_AUXV, NT_PRPSINFO, NT_SIGINFO} from './notes.js'
import {u64le} from '../util/u64le.js'

export interface ProcessInfo {
  pid: number | null
  /** Short command name (pr_fname) and the start of its argument line (pr_psargs). */
  command: string | null
  args: string | null
}

export interface SignalInfo {
  signo: number
  errno: number
  code: number
  /** si_addr for fault signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE). */
  faultAddress: number | null
}

const cstr = (b: Buffer, start: number, length: number) => {
  const s = b.subarray(start, start + length)
  const nul = s.indexOf(0)
  return s.toString('latin1', 0, nul < 0 ? s.length : nul)
}

export function parseProcessInfo(notes: Note[]): ProcessInfo {
  const note = notes.find(n => n.type === NT_PRPSINFO && n.name === 'CORE' && n.desc.length >= 136)
  if (!note) return {pid: null, command: null, args: null}
  return {pid: note.desc.readInt32LE(24), command: cstr(note.desc, 40, 16), args: cstr(note.desc, 56, 80).trimEnd()}
}

/** Auxiliary vector keys (NT_AUXV; include/uapi/linux/auxvec.h). */
export const AT_PHDR = 3
export const AT_PAGESZ = 6
export const AT_BASE = 7
export const AT_ENTRY = 9
export const AT_EXECFN = 31
export const AT_SYSINFO_EHDR = 33

export function parseAuxv(notes: Note[]): Map<number, bigint> {
  const aux = new Map<number, bigint>()
  const note = notes.find(n => n.type === NT_AUXV)
  if (!note) return aux
  for (let pos = 0; pos + 16 <= note.desc.length; pos += 16) {
    const key = u64le(note.desc, pos)
    if (key === 0) break
    aux.set(key, note.desc.readBigUInt64LE(pos + 8))
  }
  return aux
}

const FAULT_SIGNALS = new Set([4, 7, 8, 11])
const SIGSTOP = 19
/** si_code of a signal the kernel sent itself (include/uapi/asm-generic/siginfo.h). */
const SI_KERNEL = 0x80

/**
 * SIGSTOP with si_code SI_KERNEL: the stop PTRACE_ATTACH sends (the kernel's ptrace_attach:
 * send_sig_info(SIGSTOP, SEND_SIG_PRIV, task)), which gdb's gcore attaches with and then writes as
 * the core's NT_SIGINFO (every gcore fixture core holds 19/128). `kill -STOP` gives SI_USER (0),
 * tgkill SI_TKILL (-6); a fault's SI_KERNEL comes with SIGSEGV, not SIGSTOP.
 */
export function isAttachStop(s: {signo: number; code: number}): boolean {
  return s.signo === SIGSTOP && s.code === SI_KERNEL
}

export function parseSignalInfo(notes: Note[]): SignalInfo | null {
  const note = notes.find(n => n.type === NT_SIGINFO && n.desc.length >= 24)
  if (!note) return null
  const signo = note.desc.readInt32LE(0)
  return {
    signo,
    errno: note.desc.readInt32LE(4),
    code: note.desc.readInt32LE(8),
    faultAddress: FAULT_SIGNALS.has(signo) ? u64le(note.desc, 16) : null,
  }
}
