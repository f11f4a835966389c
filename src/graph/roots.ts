import path from 'node:path'
import {hex} from '../errors.js'
import {PF_W} from '../core/core-header.js'
import type {Segment} from '../core/address-space.js'
import type {Thread} from '../core/thread-registers.js'
import {findExitedTcbs, glibcThreads} from '../program/glibc-threads.js'
import type {Program} from '../program/program.js'
import {pthreadAddress, pthreadUnknownWhy} from '../program/thread-pointer.js'
import {pthreadInsideBounds} from '../program/pthread-bound.js'
import type {HeapModel} from '../heap/heap-model.js'
import {mergeIntervals, type Interval} from '../heap/interval.js'
import type {Warnings} from '../heap/warnings.js'
import {ROOT_CACHED_STACK, ROOT_GLOBAL, ROOT_MAPPING, ROOT_STACK, ROOT_TLS} from './csr.js'

/** aarch64's tcbhead_t (dtv, private) at the thread pointer, between struct pthread and the static TLS (glibc's TLS_TCB_SIZE). */
const TLS_TCB_SIZE = 16

/**
 * A range of memory whose aligned words are roots: a thread's live stack or TLS, a module's data,
 * the stack glibc keeps of an exited thread, or any other writable mapping. Labels are data:
 * kind, thread, range, and a text for people (`stack of 4242`, `libfoo.so.1 data`,
 * `anonymous mapping 0x7f…000-0x7f…000`).
 */
export interface RootRange {
  kind: typeof ROOT_STACK | typeof ROOT_GLOBAL | typeof ROOT_TLS | typeof ROOT_MAPPING | typeof ROOT_CACHED_STACK
  /** Thread id for a stack or TLS, −1 otherwise. */
  thread: number
  start: number
  end: number
  /** Where the labelled thing starts (its mapping, block or segment): offsets in labels are from here. */
  base: number
  label: string
}

/** Writable memory deliberately not scanned, by reason, in bytes (for the report). */
export interface RootExclusions {
  /** Heap spans (scanned as objects) and the allocator's own metadata. */
  allocator: number
  /** Live threads' stacks below rsp − red zone: dead frames. */
  deadStack: number
}

export interface RootSet {
  ranges: RootRange[]
  excluded: RootExclusions
  /** The allocator's metadata as its model located it (sorted, merged): never roots, and a part of memory of its own (queries/memory-accounting.ts). */
  metadata: Interval[]
  /** How the allocator's metadata and glibc's cached stacks were found (one line each). */
  how: string[]
}

/**
 * Where roots live, as word-aligned ranges, each byte of writable memory in at most one of them:
 * - every thread's stack from rsp − 128 up to its TLS, and its TLS block and TCB (fs_base);
 *   a thread's stack below rsp is dead and not scanned;
 * - the stacks glibc keeps of exited threads (`_dl_stack_cache`);
 * - the writable segments (with the anonymous .bss after them) of every module, less the allocator's
 *   static state in its module (heap.staticState: TCMalloc's page heap, central cache and size map);
 * - every other writable mapping (anonymous memory: pools and arenas of allocators built on mmap).
 * Heap spans (in any state) and the allocator's metadata are cut out of every range: heap memory is
 * scanned once, as objects; metadata is not the program's (the model's metadata says why: tcmalloc/metadata.ts).
 */
export function rootRanges(program: Program, heap: HeapModel, warnings: Warnings): RootSet {
  const core = program.core
  const memory = core.memory
  const metadata = heap.metadata(program, warnings)
  // The allocator's own structures in its module's data (TCMalloc's page heap, central cache, size map) are cut
  // out with the heap and the metadata; the rest of that data is an ordinary module's (it holds the
  // MallocExtension singleton, for one, a real pointer to a heap object).
  const allocatorCut = mergeIntervals([...spanIntervals(heap), ...metadata.intervals, ...heap.staticState()])
  const glibc = glibcThreads(program)
  const ranges: RootRange[] = []
  const claimed: Interval[] = []
  const excluded: RootExclusions = {allocator: 0, deadStack: 0}
  const add = (kind: RootRange['kind'], thread: number, start: number, end: number, label: string, cut: Interval[] = allocatorCut, base = start) => {
    const range = {start: alignUp(start), end: alignDown(end)}
    if (range.end <= range.start) return
    claimed.push(range)
    for (const piece of subtract(range, cut)) {
      if (piece.end > piece.start) ranges.push({kind, thread, start: piece.start, end: piece.end, base, label})
    }
  }

  // Stack blocks: a thread's TCB sits at the top of its block (glibc allocatestack.c), the next
  // block starts above it; the bottom of a block is the top of the one below or its mapping's start.
  const pthreadBytes = () => glibc.pthreadSize ?? core.arch.minPthreadSize
  // A thread's struct pthread, else (aarch64 without libc's descriptors) an address inside it below its thread pointer.
  const inside = pthreadInsideBounds(program, glibc.pthreadSize !== null)
  const tcbOf = (t: Thread) => pthreadAddress(program, t) ?? inside.get(t.tid) ?? null
  // Without glibc's list, exited threads' TCBs are recognised by their self pointers (glibc-threads.ts).
  const found = glibc.cachedStacks ?? findExitedTcbs(program, anonymousOutsideHeap(program, allocatorCut))
  const exited = [...found, ...glibc.unjoinedStacks]
  const exitedLabel = (tcb: number) =>
    glibc.unjoinedStacks.includes(tcb) ? 'stack of exited thread, not joined yet' : glibc.cachedStacks ? 'cached stack of exited thread' : 'stack of exited thread'
  // A thread's TLS and TCB around its struct pthread: on x86-64 (TLS variant II) the static TLS
  // below it; on aarch64 (variant I) struct pthread, then the 16-byte TCB at the thread pointer,
  // then the static TLS.
  const variantI = core.arch.name === 'aarch64'
  const tlsBelow = () => (variantI ? 0 : glibc.staticTlsSize)
  const tlsAbove = () => (variantI ? pthreadBytes() + TLS_TCB_SIZE + glibc.staticTlsSize : pthreadBytes())
  const tlsLabel = (tid: number) => `TLS of ${tid} at ${variantI ? 'its struct pthread' : 'fs_base'}`
  // A block's top is where glibc's mapping of it ends, a kernel page boundary, and its static TLS
  // ends within that TLS's alignment of it: rounding up to 4 KiB finds it whatever the kernel's
  // page (4 or 64 KiB: fixtures/arm64/heapdemo-2.10-64k).
  const blockTops: number[] = []
  for (const t of core.threads) {
    const tcb = tcbOf(t)
    if (tcb) blockTops.push(alignUpTo(tcb + tlsAbove(), 4096))
  }
  const noTcb = pthreadUnknownWhy(program)
  if (noTcb && inside.size && core.threads.every(t => tcbOf(t) !== null)) {
    warnings.add('roots', `${noTcb}; each thread's stack is cut and its TLS scanned at its thread pointer less ${core.arch.minPthreadSize} bytes (a lower bound on sizeof(struct pthread) on ${core.arch.name}), and no stack glibc keeps of an exited thread is found`)
  } else if (noTcb) warnings.add('roots', `${noTcb}; those threads' stacks are scanned up to the next thread's stack pointer and no TLS block of theirs is`)
  for (const tcb of exited) blockTops.push(alignUpTo(tcb + tlsAbove(), 4096))
  // Without its struct pthread, a thread's stack ends where the next thread's in the same mapping begins.
  const nextStack = (seg: Segment, sp: number) => core.threads.reduce((end, u) => (u.sp > sp && u.sp < end ? Math.max(sp, u.sp - core.arch.redZone) : end), seg.end)
  const bottomOf = (seg: Segment, below: number) => blockTops.reduce((b, top) => (top <= below && top > b ? top : b), seg.start)

  for (const t of core.threads) {
    const seg = core.stackSegment(t)
    if (!seg) {
      warnings.add('roots', `thread ${t.tid}: ${core.arch.sp} ${hex(t.sp)} is in no mapping of the core; its stack is not scanned`, t.sp)
      continue
    }
    const live = Math.max(seg.start, t.sp - core.arch.redZone)
    const dead = {start: bottomOf(seg, t.sp), end: live}
    if (dead.end > dead.start) {
      claimed.push(dead)
      excluded.deadStack += dead.end - dead.start
    }
    const tcb = tcbOf(t)
    const tlsSeg = tcb ? memory.segmentAt(tcb) : undefined
    if (tcb && tlsSeg === seg && tcb > t.sp) {
      // A thread created by pthread_create: stack, then its TLS and TCB, in one block.
      const tlsStart = Math.max(live, tcb - tlsBelow())
      add(ROOT_STACK, t.tid, live, tlsStart, `stack of ${t.tid}`)
      add(ROOT_TLS, t.tid, tlsStart, Math.min(seg.end, tcb + tlsAbove()), tlsLabel(t.tid), allocatorCut, tcb)
    } else {
      add(ROOT_STACK, t.tid, live, tcb ? seg.end : nextStack(seg, t.sp), `stack of ${t.tid}`)
      // The main thread's TLS and TCB: memory ld.so allocated at start-up, apart from its stack.
      if (tcb && tlsSeg && tlsSeg.flags & PF_W) add(ROOT_TLS, t.tid, Math.max(tlsSeg.start, tcb - tlsBelow()), Math.min(tlsSeg.end, tcb + tlsAbove()), tlsLabel(t.tid), allocatorCut, tcb)
    }
  }

  for (const tcb of exited) {
    const seg = memory.segmentAt(tcb)
    if (!seg || !(seg.flags & PF_W)) continue
    const top = Math.min(seg.end, alignUpTo(tcb + tlsAbove(), 4096))
    add(ROOT_CACHED_STACK, -1, bottomOf(seg, tcb), top, `${exitedLabel(tcb)} (TCB ${hex(tcb)})`, mergeIntervals([...allocatorCut, ...claimed]))
  }

  // Module data never overlaps stacks or TLS; cut those out once (not per segment: the cut can be long).
  const moduleCut = mergeIntervals([...allocatorCut, ...claimed])
  const seen = new Set<number>()
  for (const m of core.modules) {
    for (const seg of writableSegments(program, m.mappings)) {
      if (seen.has(seg.start)) continue
      seen.add(seg.start)
      add(ROOT_GLOBAL, -1, seg.start, seg.end, `${path.basename(m.path)} data`, moduleCut)
    }
  }

  // Everything else that is writable: memory the program got from mmap or brk for itself.
  const taken = mergeIntervals([...claimed])
  for (const seg of memory.segments) {
    if (!(seg.flags & PF_W)) continue
    const file = core.fileAt(seg.start)
    const label = file ? `mapping of ${path.basename(file.path)} ${hex(seg.start)}-${hex(seg.end)}` : `anonymous mapping ${hex(seg.start)}-${hex(seg.end)}`
    for (const piece of subtract({start: seg.start, end: seg.end}, taken)) {
      for (const part of subtract(piece, allocatorCut)) ranges.push({kind: ROOT_MAPPING, thread: -1, start: part.start, end: part.end, base: seg.start, label})
    }
    excluded.allocator += seg.end - seg.start - bytesOf(subtract({start: seg.start, end: seg.end}, allocatorCut))
  }
  // Only bytes the core holds are roots: a segment's bytes past its p_filesz, or cut from the
  // file, are absent, not zeros to scan (a hostile core's 48 TiB segment would take hours).
  // What is cut is said, as the scan said it of unreadable bytes before the cut moved here.
  const present = ranges.splice(0).flatMap(r => {
    const parts = memory.presentParts(r.start, r.end)
    const absent = r.end - r.start - bytesOf(parts)
    if (absent > 0) warnings.add('roots', `${r.label}: ${absent} bytes at ${hex(r.start)}..${hex(r.end)} are not in the core; not scanned`, r.start)
    return parts.map(p => ({...r, start: p.start, end: p.end}))
  })
  ranges.push(...present)
  ranges.sort((a, b) => a.start - b.start)
  const how = glibc.cachedStacks ? glibc.how : `no _dl_stack_cache (${glibc.how}); exited threads' TCBs searched by their self pointers: ${exited.length} found`
  return {ranges, excluded, metadata: metadata.intervals, how: [...metadata.how, `cached stacks: ${how}`]}
}

/** Writable memory no module file maps, less the heap and the allocator's metadata: where thread stacks come from. */
function anonymousOutsideHeap(program: Program, allocatorCut: Interval[]): Interval[] {
  const out: Interval[] = []
  for (const seg of program.core.memory.segments) {
    if (!(seg.flags & PF_W) || program.core.fileAt(seg.start)) continue
    for (const part of program.core.memory.presentParts(seg.start, seg.end)) out.push(...subtract(part, allocatorCut))
  }
  return out
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

/** The spans' memory as merged, sorted intervals. */
export function spanIntervals(heap: HeapModel): Interval[] {
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
  return out.filter(p => p.end > p.start)
}

const bytesOf = (list: Interval[]) => list.reduce((n, i) => n + i.end - i.start, 0)
const alignUpTo = (a: number, n: number) => Math.ceil(a / n) * n
const alignUp = (a: number) => alignUpTo(a, 8)
const alignDown = (a: number) => Math.floor(a / 8) * 8
