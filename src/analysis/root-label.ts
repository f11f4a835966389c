import {regionLabel, regionOf} from '../graph/root-regions.js'
import type {HeapIndex, RootRef} from '../index/heap-index.js'
import {rootLabel} from '../program/describe-address.js'
import type {Program} from '../program/program.js'

/**
 * A root for people. Registers and globals as the process image names them (register, symbol);
 * a stack slot by its own thread's rsp (one mapping may hold several threads' stacks); TLS, cached
 * stacks and mappings by the region the analysis scanned (`anonymous mapping 0x7f…000-0x7f…000
 * +0x40`, `cached stack of exited thread (TCB 0x…) +0x…`).
 */
export function rootRefLabel(program: Program, index: HeapIndex, r: RootRef): string {
  if (r.kind === 'stack') {
    const t = program.core.threads.find(x => x.tid === r.thread)
    if (t) {
      const off = r.address - t.rsp
      return `stack of thread ${t.tid}, rsp${off < 0 ? '-' : '+'}0x${Math.abs(off).toString(16)}`
    }
  }
  const region = r.kind === 'register' || r.kind === 'stack' || r.kind === 'global' ? undefined : regionOf(index.meta.rootRegions, r.address)
  return region ? regionLabel(region, r.address) : rootLabel(program, r)
}
