import {PF_W} from '../core/core-header.js'
import type {Program} from '../program/program.js'
import {u64le} from '../util/u64le.js'
import {PAR_FROM_SBRK_BASE} from './layout.js'

/** What this model reads of glibc's mp_ (struct malloc_par). */
export interface MallocPar {
  sbrkBaseAt: number
  nMmaps: number
  mmappedMem: number
  tcacheCount: number
}

/**
 * mp_, found as the one word of the module's writable data that holds the main arena's sbrk_base
 * (the break glibc's heap began at, which is the top chunk's end less system_mem: glibc counts
 * every byte it took from the break there) and whose neighbours read as mp_'s: n_mmaps not
 * negative, mmapped_mem in whole pages, the tcache's bins (64 unless tuned, at most 76) and count
 * (at most 65535). Undefined when no word, or more than one, fits.
 */
export function findMallocPar(program: Program, module: string, sbrkBase: number): MallocPar | undefined {
  const memory = program.core.memory
  const found: MallocPar[] = []
  for (const seg of memory.segments) {
    if (!(seg.flags & PF_W) || program.core.moduleAt(seg.start)?.path.split('/').pop() !== module) continue
    const bytes = memory.readBytes(seg.start, seg.presentSize)
    if (!bytes) continue
    for (let at = 8 * Math.ceil(-PAR_FROM_SBRK_BASE.nMmaps / 8); at + PAR_FROM_SBRK_BASE.tcacheCount + 8 <= bytes.length; at += 8) {
      if (u64le(bytes, at) !== sbrkBase) continue
      const nMmaps = bytes.readInt32LE(at + PAR_FROM_SBRK_BASE.nMmaps)
      const mmappedMem = u64le(bytes, at + PAR_FROM_SBRK_BASE.mmappedMem)
      const tcacheBins = u64le(bytes, at + PAR_FROM_SBRK_BASE.tcacheBins)
      const tcacheCount = u64le(bytes, at + PAR_FROM_SBRK_BASE.tcacheCount)
      if (nMmaps >= 0 && mmappedMem % 4096 === 0 && (nMmaps === 0) === (mmappedMem === 0) && tcacheBins <= 76 && tcacheCount <= 65535) found.push({sbrkBaseAt: seg.start + at, nMmaps, mmappedMem, tcacheCount})
    }
  }
  return found.length === 1 ? found[0] : undefined
}
