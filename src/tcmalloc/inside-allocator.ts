import {hex} from '../errors.js'
import type {Program} from '../program/program.js'
import {lockHolders, markInFlight, threadsInAllocator, type StructureInFlight} from '../heap/inside-allocator.js'
import type {AllocatorActivity, AllocatorLock, AllocatorModule, ThreadInAllocator} from '../heap/heap-model.js'
import type {AllocatorGlobals} from './globals.js'
import type {TcmallocHeap} from './heap.js'
import type {Layout} from './layout.js'
import {IN_USE, type SpanTable} from './spans.js'
import type {ThreadCacheInfo} from './thread-caches.js'
import type {UncountedSpans} from './central-cache.js'
import type {Warnings} from '../heap/warnings.js'

/**
 * Which threads were inside TCMalloc (their innermost frames of its code) and which of its locks
 * were held (the page heap's: sizeClass null; a lock word is 0 free, 1 held, 2 held with waiters in
 * 2.10+, older builds store spin counts), and the warnings about structures they were changing
 * marked as in flight. It unwinds every thread: called once the analysis's large phases are done,
 * since the modules' call-frame information stays loaded.
 */
export function allocatorActivity(program: Program, heap: TcmallocHeap): AllocatorActivity {
  const {module, globals} = heap
  const threads = threadsInAllocator(program, module, ALLOCATOR_CODE)
  const locks = heldLocks(program, module, globals).map(l => ({...l, ...lockThreads(threads, l.sizeClass)}))
  markStructuresInFlight(heap.warnings, {spans: heap.spans, threadCaches: heap.threadCaches, uncountedSpans: heap.uncountedSpans, layout: globals.layout, globals, inside: threads, locks})
  return {threads, locks, pageHeapLockKnown: pageHeapLockKnown(program, module, globals)}
}

const PAGE_HEAP_LOCK = '_ZN8tcmalloc6Static14pageheap_lock_E'
/** Names of TCMalloc's code in a static link, where the module is the whole executable. */
const ALLOCATOR_CODE = /tcmalloc|^tc_[a-z]|TCMalloc|SpinLock|do_malloc|do_free|do_memalign|nallocx/
/** A thread waiting for a SpinLock (gperftools' slow path). */
const WAITING_CODE = /SpinLock::SlowLock|SpinLockDelay/

/**
 * TCMalloc's locks whose word was not 0 in the core: the page heap's (Static::pageheap_lock_ by
 * symbol, or PageHeap::lock_ in 2.10.80+), and each central free list's. A held lock means a
 * thread was inside that structure: its lists may be caught mid-update.
 */
function heldLocks(program: Program, module: AllocatorModule, globals: AllocatorGlobals): Array<Omit<AllocatorLock, 'heldBy' | 'waiting'>> {
  const memory = program.core.memory
  const {layout} = globals
  const out: Array<Omit<AllocatorLock, 'heldBy' | 'waiting'>> = []
  const pageHeapLock = layout.pageHeap.lock !== null ? globals.pageHeap + layout.pageHeap.lock : program.symbolAddress(PAGE_HEAP_LOCK, [module.loaded])?.address
  if (pageHeapLock !== undefined) {
    const word = memory.readI32(pageHeapLock)
    if (word) out.push({name: `page heap lock (${hex(pageHeapLock)})`, address: pageHeapLock, word, sizeClass: null})
  }
  for (let cl = 1; cl < globals.sizes.count; cl++) {
    const at = globals.centralCache + cl * layout.central.stride + layout.central.lock
    const word = memory.readI32(at)
    if (word) out.push({name: `central free list lock of class ${cl} (${hex(at)})`, address: at, word, sizeClass: cl})
  }
  return out
}

/** Who holds a lock, by the code that takes it: the page heap's, or a central free list's. */
function lockThreads(threads: ThreadInAllocator[], sizeClass: number | null): {heldBy: number[]; waiting: number[]} {
  return lockHolders(threads, sizeClass === null ? /PageHeap::|do_malloc_pages|pageheap/i : /CentralFreeList::/, WAITING_CODE)
}

function pageHeapLockKnown(program: Program, module: AllocatorModule, globals: AllocatorGlobals): boolean {
  return globals.layout.pageHeap.lock !== null || program.symbolAddress(PAGE_HEAP_LOCK, [module.loaded]) !== undefined
}

/**
 * Marks the warnings about structures a thread was changing when the core was taken: the thread
 * cache of a thread inside TCMalloc, the central list (and its spans and transfer slots) of a class
 * whose lock was held, the page heap and its spans while its lock was held. Such a warning may be
 * the change caught half done, not damage.
 */
function markStructuresInFlight(warnings: Warnings, heap: InFlightInputs): void {
  if (heap.inside.length === 0 && heap.locks.length === 0) return
  const ranges: StructureInFlight[] = []
  const insideTids = new Set(heap.inside.map(t => t.tid))
  for (const c of heap.threadCaches) {
    if (c.tid !== null && insideTids.has(c.tid)) ranges.push({start: c.address, end: c.address + heap.layout.threadCache.objectSize, why: `thread ${c.tid} was inside TCMalloc`})
  }
  const stride = heap.layout.central.stride
  const lockedClass = new Map<number, string>()
  let pageHeapLock: string | null = null
  for (const l of heap.locks) {
    if (l.sizeClass === null) pageHeapLock = `the ${l.name} was held`
    else {
      lockedClass.set(l.sizeClass, `the ${l.name} was held`)
      const entry = heap.globals.centralCache + l.sizeClass * stride
      ranges.push({start: entry, end: entry + stride, why: `the ${l.name} was held`})
    }
  }
  if (pageHeapLock) ranges.push({start: heap.globals.pageHeap, end: heap.globals.pageHeap + heap.layout.pageHeap.size, why: pageHeapLock})
  const handedOver = new Map<number, string>()
  for (const p of spansBetweenLists(heap)) {
    ranges.push({start: p.entry, end: p.entry + stride, why: p.why})
    handedOver.set(p.sizeClass, p.why)
  }
  const records = new Map<number, string>()
  if (lockedClass.size > 0 || handedOver.size > 0) {
    for (let s = 0; s < heap.spans.count; s++) {
      if (heap.spans.location[s] !== IN_USE) continue
      const cl = heap.spans.sizeClass[s]!
      // ReleaseToSpans gives a span back once its refcount reaches 0 without pushing that last
      // object: the span, still in use in the page map, then has one free object fewer than it holds.
      const why = lockedClass.get(cl) ?? (heap.spans.refcount[s] === 0 ? handedOver.get(cl) : undefined)
      if (why) records.set(heap.spans.record[s]!, why)
    }
  }
  const pageLevel = pageHeapLock
  markInFlight(warnings, {records, ranges, byKind: w => (pageLevel && (w.kind === 'span' || w.kind === 'pagemap' || w.kind === 'page-heap') ? pageLevel : undefined)})
}

interface InFlightInputs {
  spans: SpanTable
  threadCaches: ThreadCacheInfo[]
  uncountedSpans: UncountedSpans[]
  layout: Layout
  globals: AllocatorGlobals
  inside: ThreadInAllocator[]
  locks: Array<Omit<AllocatorLock, 'heldBy' | 'waiting'>>
}

/** Where a central list's counters and the page map's spans part with no lock held (spansBetweenLists). */
export const SPAN_HANDOVER = /CentralFreeList::(Populate|ReleaseToSpans|ReleaseListToSpans)\b/

/**
 * The central lists whose spans a thread was handing between the page heap and the list. Populate
 * drops the list's lock while it takes a span from the page heap, registers its class in the page
 * map and cuts it into a free list; only then does it take the lock again, link the span and add
 * it to num_spans_ and its objects to counter_. ReleaseToSpans does the reverse: it takes an
 * emptied span off the counts, drops the lock, and only then gives it back to the page heap. A
 * thread stopped in between (or waiting for a lock, in SpinLock::SlowLock) leaves its class with
 * one span and up to a span's objects more in the page map than the counters say, and no lock
 * held. Such classes are in flight when the spans beyond the counters are no more than the
 * threads there, each class's excess is whole spans' worth of objects at most, and no class is
 * short: anything else is left to the warnings.
 */
function spansBetweenLists(heap: InFlightInputs): Array<{entry: number; sizeClass: number; why: string}> {
  const handing = heap.inside.filter(t => t.frames.some(f => SPAN_HANDOVER.test(f.name)))
  if (handing.length === 0 || heap.uncountedSpans.length === 0) return []
  const {sizes} = heap.globals
  const fits = (u: UncountedSpans) =>
    u.spans >= 1 && u.objects >= 0 && u.objects <= u.spans * Math.floor((sizes.pages[u.sizeClass]! * heap.layout.pageSize) / sizes.size[u.sizeClass]!)
  if (!heap.uncountedSpans.every(fits)) return []
  const spans = heap.uncountedSpans.reduce((n, u) => n + u.spans, 0)
  if (spans > handing.length) return []
  const where = handing.map(t => `${t.tid} in CentralFreeList::${t.frames.map(f => SPAN_HANDOVER.exec(f.name)?.[1]).find(Boolean)}`).join(', ')
  return heap.uncountedSpans.map(u => ({
    entry: u.entry,
    sizeClass: u.sizeClass,
    why: `thread ${where}, between the page heap and the central list: a new span is counted only once cut into objects, an emptied one is uncounted before the page heap takes it back (class ${u.sizeClass})`,
  }))
}
