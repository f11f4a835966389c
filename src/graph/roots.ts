import path from 'node:path'
import {hex} from '../errors.js'
import {PF_W} from '../core/core-header.js'
import type {Segment} from '../core/address-space.js'
import type {Program} from '../program/program.js'
import type {TcmallocHeap} from '../tcmalloc/heap.js'
import type {Warnings} from '../tcmalloc/warnings.js'
import {ROOT_GLOBAL, ROOT_STACK} from './csr.js'

/** Bytes below rsp a leaf function may use without moving rsp (the x86-64 SysV red zone). */
export const RED_ZONE = 128

/** A range of memory whose aligned words are roots: a thread's live stack, or a module's data. */
export interface RootRange {
  kind: typeof ROOT_STACK | typeof ROOT_GLOBAL
  /** Thread id for a stack, −1 for globals. */
  thread: number
  start: number
  end: number
  /** What the range is, for people: `stack of 4242`, `libfoo.so.1 data`. */
  label: string
}

interface Interval {
  start: number
  end: number
}

/**
 * Where roots live, as word-aligned ranges: every thread's stack from rsp − 128 to the end of the
 * mapping holding rsp, and the writable segments (with the anonymous .bss after them) of every
 * module. TCMalloc's own state is left out: the page heap, central cache array and size map in
 * the allocator's module (a library, or the executable when linked statically). Heap spans are cut out of every
 * range, so memory that is an object (a heap-allocated stack, a brk heap that the kernel merged
 * with .bss) is scanned once, as objects, never as roots.
 */
export function rootRanges(program: Program, heap: TcmallocHeap, warnings: Warnings): RootRange[] {
  const core = program.core
  const spans = spanIntervals(heap)
  const ranges: RootRange[] = []
  const add = (kind: RootRange['kind'], thread: number, start: number, end: number, label: string, cut: Interval[]) => {
    for (const piece of subtract({start: alignUp(start), end: alignDown(end)}, cut)) {
      if (piece.end > piece.start) ranges.push({kind, thread, start: piece.start, end: piece.end, label})
    }
  }

  for (const t of core.threads) {
    const seg = core.stackSegment(t)
    if (!seg) {
      warnings.add('roots', `thread ${t.tid}: rsp ${hex(t.rsp)} is in no mapping of the core; its stack is not scanned`, t.rsp)
      continue
    }
    add(ROOT_STACK, t.tid, Math.max(seg.start, t.rsp - RED_ZONE), seg.end, `stack of ${t.tid}`, spans)
  }

  // TCMalloc's own structures (page heap, central cache, size map) are cut out of its module's
  // data; the rest of that data is an ordinary module's (it holds the MallocExtension singleton,
  // for one, a real pointer to a heap object).
  const allocator = heap.module.loaded.module
  const exclusions = allocatorState(heap)
  const seen = new Set<number>()
  for (const m of core.modules) {
    const cut = m === allocator ? mergeIntervals([...spans, ...exclusions]) : spans
    for (const seg of writableSegments(program, m.mappings)) {
      if (seen.has(seg.start)) continue
      seen.add(seg.start)
      add(ROOT_GLOBAL, -1, seg.start, seg.end, `${path.basename(m.path)} data`, cut)
    }
  }
  return ranges
}

/** PT_LOAD segments with PF_W overlapping the mappings, each followed by its anonymous .bss if any. */
export function writableSegments(program: Program, mappings: ReadonlyArray<{start: number; end: number}>): Segment[] {
  const segments = program.core.memory.segments
  const out: Segment[] = []
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!
    if (!(s.flags & PF_W) || !mappings.some(f => s.start < f.end && s.end > f.start)) continue
    out.push(s)
    const next = segments[i + 1]
    if (next && next.start === s.end && next.flags & PF_W && !program.core.fileAt(next.start)) out.push(next)
  }
  return [...new Set(out)]
}

/** TCMalloc's static state inside the executable's data when linked statically. */
function allocatorState(heap: TcmallocHeap): Interval[] {
  const {globals} = heap
  const {layout, sizes} = globals
  const centralCount = Math.max(sizes.count, layout.central.count)
  return mergeIntervals([
    {start: globals.pageHeap, end: globals.pageHeap + layout.pageHeap.size},
    {start: globals.centralCache, end: globals.centralCache + centralCount * layout.central.stride},
    {start: globals.sizeMap, end: globals.sizeMap + layout.sizeMap.size},
  ])
}

/** The spans' memory as merged, sorted intervals. */
function spanIntervals(heap: TcmallocHeap): Interval[] {
  const {spans, pageSize} = heap
  const list: Interval[] = []
  for (let s = 0; s < spans.count; s++) {
    const start = spans.start[s]!
    const end = start + spans.pages[s]! * pageSize
    const last = list[list.length - 1]
    if (last && start <= last.end) last.end = Math.max(last.end, end)
    else list.push({start, end})
  }
  return list
}

function mergeIntervals(list: Interval[]): Interval[] {
  const sorted = list.filter(i => i.end > i.start).sort((a, b) => a.start - b.start)
  const out: Interval[] = []
  for (const i of sorted) {
    const last = out[out.length - 1]
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end)
    else out.push({...i})
  }
  return out
}

/** range minus the sorted, disjoint intervals `cut`, word-aligned. */
function subtract(range: Interval, cut: Interval[]): Interval[] {
  // First interval that ends after range.start.
  let lo = 0
  let hi = cut.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (cut[mid]!.end <= range.start) lo = mid + 1
    else hi = mid
  }
  const out: Interval[] = []
  let pos = range.start
  for (let i = lo; i < cut.length && cut[i]!.start < range.end; i++) {
    const c = cut[i]!
    if (c.start > pos) out.push({start: pos, end: alignDown(c.start)})
    pos = Math.max(pos, alignUp(c.end))
  }
  if (pos < range.end) out.push({start: pos, end: range.end})
  return out
}

const alignUp = (a: number) => Math.ceil(a / 8) * 8
const alignDown = (a: number) => Math.floor(a / 8) * 8
