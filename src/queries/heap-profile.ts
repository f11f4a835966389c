import {TomaError} from '../errors.js'
import {permissions} from '../core/address-space.js'
import {PT_LOAD} from '../elf/constants.js'
import type {HeapIndex} from '../index/heap-index.js'
import {SampleIndex, type StoredSample} from '../index/sample-index.js'
import type {Program} from '../program/program.js'
import {StackNamer, type FrameName} from './allocations.js'
import {AT_SYSINFO_EHDR} from '../core/process-info.js'

/** One line of the process's memory map as /proc/PID/maps had it, rebuilt from the core. */
export interface MapsLine {
  start: number
  end: number
  /** `rwxp` style; a core does not record private/shared, so always `p`. */
  permissions: string
  fileOffset: number
  /** The mapped file's path (NT_FILE), '' for anonymous memory. */
  path: string
  /** The GNU build-id of the module this file is, when the core holds it. */
  buildId: string | null
}

/** The sampled live objects of a core, ready to write as a heap profile (pprof or gperftools' text). */
export interface HeapProfile {
  /** TCMalloc's sampling period: the mean bytes allocated between two samples. */
  period: number
  /** In the order GetHeapSample lists them. */
  samples: StoredSample[]
  /** Every mapping of the process, in address order. */
  maps: MapsLine[]
  /** The name of every return address of the samples' stacks. */
  names: Map<number, FrameName>
}

/**
 * The sampled objects of an index with their stacks named and the process's mappings, or null when
 * the core has none. `periodOverride` stands in for a period the analysis could not read (or corrects it).
 */
export function heapProfile(program: Program, index: HeapIndex, periodOverride?: number): HeapProfile | null {
  const stored = new SampleIndex(index)
  if (stored.count === 0) return null
  const period = periodOverride ?? stored.period
  if (period === null) {
    throw new TomaError('the sampling period is unknown (no symbol FLAGS_tcmalloc_sample_parameter in the tcmalloc module): give it with --sample-period N (the TCMALLOC_SAMPLE_PARAMETER the process ran with)')
  }
  const samples = [...stored.inListOrder()]
  const namer = new StackNamer(program)
  const names = new Map<number, FrameName>()
  for (const s of samples) for (const pc of s.stack) if (!names.has(pc)) names.set(pc, namer.name(pc))
  return {period, samples, maps: processMaps(program), names}
}

/**
 * The process's mappings: every file mapping NT_FILE lists (its protection from the core's segment
 * there, or, for pages gcore did not dump and so wrote no segment for, from the module file's
 * PT_LOAD at that address; '---' when neither is at hand) and every segment of anonymous memory.
 * What a core does not keep (device, inode, shared mappings, [heap], [vvar], [vsyscall]) is left out.
 */
export function processMaps(program: Program): MapsLine[] {
  const core = program.core
  const modules = new Map(program.modules.map(m => [m.module.path, m]))
  const out: MapsLine[] = core.files.map(f => {
    const seg = core.memory.segmentAt(f.start)
    const m = modules.get(f.path)
    let flags = seg?.start === f.start ? seg.flags : undefined
    if (flags === undefined && m?.file) {
      const vaddr = f.start - m.module.loadBias
      flags = m.file.segments.find(e => e.type === PT_LOAD && vaddr >= pageFloor(e.vaddr) && vaddr < e.vaddr + e.memsz)?.flags
    }
    return {start: f.start, end: f.end, permissions: `${flags === undefined ? '---' : permissions(flags)}p`, fileOffset: f.fileOffset, path: f.path, buildId: m?.module.buildId ?? null}
  })
  // The kernel's names the core still shows: the vDSO (auxv AT_SYSINFO_EHDR) and the main thread's stack.
  const vdso = Number(core.auxv.get(AT_SYSINFO_EHDR) ?? -1)
  const mainRsp = core.threads.find(t => t.tid === core.process.pid)?.sp ?? -1
  for (const seg of core.memory.segments) {
    if (core.files.some(f => f.start < seg.end && seg.start < f.end)) continue
    const path = seg.start === vdso ? '[vdso]' : mainRsp >= seg.start && mainRsp < seg.end ? '[stack]' : ''
    out.push({start: seg.start, end: seg.end, permissions: `${permissions(seg.flags)}p`, fileOffset: 0, path, buildId: null})
  }
  return out.sort((a, b) => a.start - b.start)
}

const pageFloor = (v: number) => v - (v % 4096)
