import {hex} from '../errors.js'
import type {HeapIndex, ObjectRef} from '../index/heap-index.js'
import type {Sighting} from '../index/sighting-index.js'
import {RetentionIndex} from '../index/retention-index.js'
import type {HeapSummary} from './heap-summary.js'
import {deadFrames} from '../program/dead-frames.js'
import {pthreadAddress} from '../program/thread-pointer.js'
import {nptlThreads, type NptlThread} from '../program/nptl.js'
import type {Program} from '../program/program.js'
import {codeLabel} from './code-label.js'
import {unwindThread, type Frame} from '../program/unwind.js'
import type {Thread} from '../core/thread-registers.js'
import {u64le} from '../util/u64le.js'

const TOP_FRAMES = 3

/** Live heap objects pointed to by the words of [start, end): where, and which object. */
function heapPointers(program: Program, index: HeapIndex, start: number, end: number) {
  const out: Array<{at: string; object: {id: number; address: string; offset: number; size: number; type: string | null; sizeClass: number}}> = []
  if (end <= start) return out
  const bytes = program.core.memory.readBytes(start, end - start)
  if (!bytes) return out
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    const w = u64le(bytes, i)
    if (w < 4096) continue
    const o = index.objectAt(w)
    if (!o || index.state(o.index) !== 'live') continue
    out.push({at: hex(start + i), object: {id: o.index, address: hex(o.start), offset: w - o.start, size: o.size, type: index.type(o.index), sizeClass: index.sizeClass(o)}})
  }
  return out
}

/** A frame as the thread views show it: where, how it was found, and its code named (codeLabel). */
export function frameOut(program: Program, f: Frame) {
  const name = codeLabel(program, f.pc, f.level === 0 || f.how === 'registers')
  return {level: f.level, pc: hex(f.pc), cfa: hex(f.cfa), sp: hex(f.sp), function: name.function, label: name.label, how: f.how, signalFrame: f.signalFrame}
}

/** One line's worth per thread: who it is, where it runs, what it holds. */
export function threadsOf(program: Program, index: HeapIndex) {
  const nptl = nptlThreads(program)
  const byTid = new Map<number, NptlThread>(nptl.threads.map(t => [t.tid, t]))
  const signal = program.core.signal
  const retention = new RetentionIndex(index)
  const only = retention.threadRetained()
  return {
    nptl: {how: nptl.how, notes: nptl.notes},
    signal: signal ? {signo: signal.signo, code: signal.code, faultAddress: signal.faultAddress === null ? null : hex(signal.faultAddress)} : null,
    threads: program.core.threads.map((t, i) => {
      const n = byTid.get(t.tid)
      const unwound = unwindThread(program, t)
      const seg = program.core.memory.segmentAt(t.sp)
      const stackTop = n?.stackBlock ? n.stackBlock.start + n.stackBlock.size : seg?.end ?? t.sp
      const tcb = pthreadAddress(program, t)
      const caches = (index.meta.summary as unknown as HeapSummary).threadCaches.filter(c => c.tid === t.tid)
      return {
        tid: t.tid,
        pthread: tcb === null ? null : hex(tcb),
        // The kernel writes the thread that took the fatal signal first; its pr_cursig says which signal.
        crashed: i === 0 && t.signal !== 0 && signal !== null,
        signal: t.signal || null,
        startRoutine: n?.startRoutine ? codeLabel(program, n.startRoutine).label : null,
        startArg: n?.startArg != null ? hex(n.startArg) : null,
        stack: {
          used: Math.max(0, stackTop - t.sp),
          size: n?.stackBlock ? n.stackBlock.size : seg ? seg.end - seg.start : null,
          guard: n?.guardSize ?? null,
        },
        threadCacheBytes: caches.reduce((s, c) => s + c.bytes, 0),
        // What would become unreachable without this thread's registers, stack and TLS.
        onlyThisThread: {bytes: only.bytes[retention.threadTids.indexOf(t.tid)] ?? 0, objects: only.objects[retention.threadTids.indexOf(t.tid)] ?? 0},
        topFrames: unwound.frames.slice(0, TOP_FRAMES).map(f => frameOut(program, f).label),
        frames: unwound.frames.length,
      }
    }),
  }
}

/** A thread's full call stack with the heap pointers of each frame, and the returned frames below it. */
export function stackOf(program: Program, index: HeapIndex, tid: number) {
  const thread = program.core.threads.find(t => t.tid === tid)
  if (!thread) return null
  const unwound = unwindThread(program, thread)
  const frames = unwound.frames.map((f, i) => {
    // A frame's words run from its stack pointer up to its CFA (the outermost one to the end of the stack).
    const end = i + 1 < unwound.frames.length ? f.cfa : Math.min(f.cfa, program.core.memory.segmentAt(f.sp)?.end ?? f.cfa)
    return {...frameOut(program, f), pointers: heapPointers(program, index, f.sp, end)}
  })
  const dead = deadFrames(program, thread.sp, deadFramesFloor(program, thread)).map(d => ({
    returnAddressAt: hex(d.returnAddressAt),
    ...(() => {
      const c = codeLabel(program, d.pc, false)
      return {function: c.function, label: c.label}
    })(),
    start: hex(d.start),
    end: hex(d.end),
    pointers: heapPointers(program, index, d.start, d.end),
  }))
  return {tid, stop: unwound.stop, frames, deadFrames: dead}
}

/**
 * The lowest address a thread's returned frames can occupy: its stack block's start when NPTL
 * says it; otherwise above the live frames of any other thread whose stack lies below it in the
 * same mapping (their outermost frame's CFA bounds them), so another thread's live frames are
 * never read as this one's dead ones.
 */
function deadFramesFloor(program: Program, thread: Thread): number {
  const block = nptlThreads(program).threads.find(t => t.tid === thread.tid)?.stackBlock
  if (block) return block.start
  let floor = 0
  for (const other of program.core.threads) {
    if (other === thread || other.sp >= thread.sp) continue
    const frames = unwindThread(program, other).frames
    const outermost = frames.length ? frames[frames.length - 1]!.cfa : other.sp
    floor = Math.max(floor, outermost + 16)
  }
  return floor
}

export type {Sighting}

/**
 * Heap objects pointed to from the frames of calls that have returned (below each thread's stack
 * pointer): not roots, but leads to the code that last handled an object that leaked or was freed.
 * Object slot → where it was last seen. Run at analyze time (the index keeps them: queries read
 * storedSightings), `objectAt` being the heap model's lookup.
 */
export function deadFrameSightings(program: Program, objectAt: (addr: number) => ObjectRef | undefined): Map<number, Sighting[]> {
  const seen = new Map<number, Sighting[]>()
  for (const thread of program.core.threads) {
    for (const d of deadFrames(program, thread.sp, deadFramesFloor(program, thread))) {
      const bytes = program.core.memory.readBytes(d.start, d.end - d.start)
      if (!bytes) continue
      let label: {function: string | null; label: string} | undefined
      for (let i = 0; i + 8 <= bytes.length; i += 8) {
        const w = u64le(bytes, i)
        if (w < 4096) continue
        const o = objectAt(w)
        if (!o) continue
        label ??= codeLabel(program, d.pc, false)
        const list = seen.get(o.index) ?? []
        list.push({tid: thread.tid, function: label.function, frame: label.label, at: hex(d.start + i)})
        seen.set(o.index, list)
      }
    }
  }
  return seen
}

export type ThreadList = ReturnType<typeof threadsOf>
export type ThreadStack = NonNullable<ReturnType<typeof stackOf>>
