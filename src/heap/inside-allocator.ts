import {describeSymbolic, type Program} from '../program/program.js'
import {unwindThread} from '../program/unwind.js'
import type {AllocatorLock, AllocatorModule, ThreadInAllocator} from './heap-model.js'
import type {HeapWarning, Warnings} from './warnings.js'

/** The allocator's frames kept per thread (innermost first): enough to tell which of its structures it was in. */
const MAX_FRAMES = 8

/**
 * The threads whose stacks hold the allocator's frames: each thread unwound (as `toma stack` does),
 * and a frame is the allocator's when its pc is the allocator library's code, or, in a static link
 * (the module is the whole executable), when its symbol's name is one `allocatorCode` matches.
 * A busy process dumped from outside has such threads in the middle of a list update.
 */
export function threadsInAllocator(program: Program, module: AllocatorModule, allocatorCode: RegExp): ThreadInAllocator[] {
  const isStatic = module.loaded === program.executable
  const inAllocator = (pc: number): boolean => {
    if (!module.isCode(pc)) return false
    if (!isStatic) return true
    const s = program.symbolize(pc)
    return s?.symbol != null && allocatorCode.test(s.symbol.name)
  }
  const out: ThreadInAllocator[] = []
  for (const thread of program.core.threads) {
    const {frames} = unwindThread(program, thread)
    const mine = frames.filter(f => inAllocator(f.level === 0 ? f.pc : f.pc - 1))
    if (mine.length === 0) continue
    out.push({
      tid: thread.tid,
      atPc: mine[0]!.level === 0,
      frames: mine.slice(0, MAX_FRAMES).map(f => ({pc: f.pc, name: describeSymbolic(program.symbolize(f.level === 0 ? f.pc : f.pc - 1)).replace(/\+0x[0-9a-f]+ \(/, ' (')})),
    })
  }
  return out
}

/**
 * Who holds a lock, as far as the threads' frames tell (a spin lock records no owner): the threads
 * inside the code that takes it (`code`) and not waiting for a lock in the spin lock's slow path
 * (`waitingCode`), and the threads waiting.
 */
export function lockHolders(threads: ThreadInAllocator[], code: RegExp, waitingCode: RegExp): {heldBy: number[]; waiting: number[]} {
  const heldBy: number[] = []
  const waiting: number[] = []
  for (const t of threads) {
    if (!t.frames.some(f => code.test(f.name))) continue
    if (t.frames.some(f => waitingCode.test(f.name))) waiting.push(t.tid)
    else heldBy.push(t.tid)
  }
  return {heldBy, waiting}
}

/** Memory a thread was changing when the core was taken, and why toma thinks so. */
export interface StructureInFlight {
  start: number
  end: number
  why: string
}

/**
 * Marks the warnings about structures caught mid-update: a warning naming an address that is one
 * of `records` (a record the model keeps by address: a span of a locked list) or inside one of
 * `ranges` (a cache, a list head, the page allocator), or that `byKind` says a held lock covers
 * (the page-level lock covers every span and page-map warning). Such a warning may be the change
 * caught half done, not damage; a warning of damage (a bad link) is never marked.
 */
export function markInFlight(
  warnings: Warnings,
  structures: {records: Map<number, string>; ranges: StructureInFlight[]; byKind?: (w: HeapWarning) => string | undefined},
): void {
  for (const w of warnings.list) {
    if (w.damage) continue
    for (const a of w.addresses) {
      const why = structures.records.get(a) ?? structures.ranges.find(r => a >= r.start && a < r.end)?.why ?? structures.byKind?.(w)
      if (why) {
        w.inFlight = why
        break
      }
    }
  }
}

/** The page-level lock: of no size class, no CPU, not the span records' own. */
export function isPageLevelLock(l: AllocatorLock): boolean {
  return l.sizeClass === null && l.cpu === undefined && !l.spanRecords
}
