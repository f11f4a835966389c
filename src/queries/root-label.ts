import {regionLabel, regionOf} from '../graph/root-regions.js'
import type {HeapIndex, RootRef} from '../index/heap-index.js'
import {rootLabel} from '../program/describe-address.js'
import type {Program} from '../program/program.js'
import {nptlThreads} from '../program/nptl.js'
import {unwindThread} from '../program/unwind.js'
import {codeLabel} from './code-label.js'

/**
 * A root for people. Registers and globals as the process image names them (register, symbol);
 * a stack slot by its own thread's rsp (one mapping may hold several threads' stacks); TLS, cached
 * stacks and mappings by the region the analysis scanned (`anonymous mapping 0x7f…000-0x7f…000
 * +0x40`, `cached stack of exited thread (TCB 0x…) +0x…`).
 */
export function rootRefLabel(program: Program, index: HeapIndex, r: RootRef): string {
  if ((r.kind === 'tls' || r.kind === 'stack') && r.thread !== null) {
    // The words of struct pthread that hold what the thread was started with, or its pthread-specific values.
    const n = nptlThreads(program).threads.find(x => x.tid === r.thread)
    if (n?.startRoutine && r.address === n.startArgSlot) return `start argument of thread ${r.thread} (${codeLabel(program, n.startRoutine).label})`
    const key = n?.specific.find(k => k.slot === r.address)
    if (key) return `pthread-specific value of key ${key.key} in thread ${r.thread}`
  }
  if (r.kind === 'stack') {
    const t = program.core.threads.find(x => x.tid === r.thread)
    if (t) {
      // By its frame, as a debugger names it: the function, its frame number and the offset from its CFA.
      const frame = unwindThread(program, t).frames.find(f => r.address >= f.sp - program.core.arch.redZone && r.address < f.cfa)
      if (frame) {
        const off = frame.cfa - r.address
        return `thread ${t.tid} #${frame.level} ${codeLabel(program, frame.pc, frame.level === 0).label}, CFA-0x${off.toString(16)}`
      }
      const off = r.address - t.sp
      return `stack of thread ${t.tid}, ${program.core.arch.sp}${off < 0 ? '-' : '+'}0x${Math.abs(off).toString(16)}`
    }
  }
  const region = r.kind === 'register' || r.kind === 'stack' || r.kind === 'global' ? undefined : regionOf(index.meta.rootRegions, r.address)
  return region ? regionLabel(region, r.address) : rootLabel(program, r)
}

/** The frame number of a stack root (as `toma stack` numbers frames), or null for other roots. */
export function rootFrame(program: Program, r: RootRef): number | null {
  if (r.kind !== 'stack') return null
  const t = program.core.threads.find(x => x.tid === r.thread)
  const frame = t && unwindThread(program, t).frames.find(f => r.address >= f.sp - program.core.arch.redZone && r.address < f.cfa)
  return frame ? frame.level : null
}
