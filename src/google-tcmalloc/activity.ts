import {hex} from '../errors.js'
import type {AllocatorActivity, AllocatorLock, ThreadInAllocator, TouchedFigure} from '../heap/heap-model.js'
import {lockHolders, markInFlight, threadsInAllocator, type StructureInFlight} from '../heap/inside-allocator.js'
import {touchedFiguresOf} from '../heap/touched-figures.js'
import type {Program} from '../program/program.js'
import type {GoogleHeap} from './heap.js'

/** tcmalloc's page-level lock (a global of its own, not a member of Static): by symbol only. */
const PAGEHEAP_LOCK = '_ZN8tcmalloc17tcmalloc_internal13pageheap_lockE'

/**
 * google/tcmalloc's code in the executable it is linked into: its namespace (mangled `8tcmalloc`,
 * or demangled), its entry points (TCMallocInternal*, which malloc, free and operator new/delete
 * alias), and abseil's SpinLock, which it takes its locks with (AbslInternalSpinLockDelay is where a
 * waiter sleeps). Symbols as the executable's .symtab names them.
 */
const ALLOCATOR_CODE = /tcmalloc|TCMalloc|SpinLock|^(malloc|free|calloc|realloc|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|nallocx|sdallocx|malloc_usable_size)$|^_Z(nw|na|dl|da)[mjPv]|^operator (new|delete)/
/** A thread waiting for one of abseil's SpinLocks: its slow path, and the futex wait it sleeps in. */
const WAITING_CODE = /SpinLock8SlowLock|SpinLock::SlowLock|SpinLockDelay/
/** Code that takes each kind of lock (the functions the lock holder's frames are in: inlined code is its caller's). */
const PAGE_LEVEL_CODE = /HugePageAwareAllocator|HugePageFiller|HugeCache|HugeAllocator|HugeRegion|PageAllocator|do_malloc_pages|alloc_large|FreePages|pageheap/i
const CENTRAL_CODE = /CentralFreeList/
const TRANSFER_CODE = /TransferCache/

/** absl::base_internal::SpinLock's lockword_: bit 0 is kSpinLockHeld; the others are flags and its waiters' wait time. */
const SPINLOCK_HELD = 1

/** A held lock, with what guards it (its kind, tcmalloc's own class) and its name without its address (for the reasons it gives). */
type Held = Omit<AllocatorLock, 'heldBy' | 'waiting'> & {kind: 'page' | 'transfer' | 'central'; tcmallocClass: number; label: string}

/**
 * Which threads were inside tcmalloc and which of its locks were held when the core was taken, and
 * the warnings about structures they were changing marked in flight. Unwinds every thread.
 */
export function googleActivity(program: Program, heap: GoogleHeap): AllocatorActivity {
  const threads = threadsInAllocator(program, heap.module, ALLOCATOR_CODE)
  const pageLock = program.symbolAddress(PAGEHEAP_LOCK, [heap.module.loaded])?.address
  const held = heldLocks(program, heap, pageLock)
  const locks = held.map(({kind, tcmallocClass: _, label: __, ...l}) => ({...l, ...lockHolders(threads, kind === 'page' ? PAGE_LEVEL_CODE : kind === 'central' ? CENTRAL_CODE : TRANSFER_CODE, WAITING_CODE)}))
  markStructuresInFlight(heap, threads, held)
  return {threads, locks, pageHeapLockKnown: pageLock !== undefined}
}

/**
 * The locks whose held bit was set: pageheap_lock (the page allocator, the page map, span records)
 * by its symbol, and per size class its transfer cache's and central free list's lock_, where the
 * layout places them (a family whose layout lacks them: not read, and pageHeapLockKnown says
 * nothing of them). A lock's size class is the compact one the index keeps (0 where no span of the
 * class is in use); its name gives tcmalloc's own.
 */
function heldLocks(program: Program, heap: GoogleHeap, pageLock: number | undefined): Held[] {
  const memory = program.core.memory
  const out: Held[] = []
  if (pageLock !== undefined) {
    const word = memory.readU32(pageLock)
    if (word !== undefined && word & SPINLOCK_HELD) out.push({kind: 'page', tcmallocClass: 0, label: 'pageheap_lock', name: `pageheap_lock at ${hex(pageLock)}`, address: pageLock, word, sizeClass: null})
  }
  const manager = heap.globals.at.transferCache
  const L = heap.layout.transferCache
  if (manager === null) return out
  const compactOf = new Map(heap.classOfCompact.map((c, i) => [c, i]))
  for (let cls = 1; cls < heap.shift.numClasses; cls++) {
    for (const [kind, offset, what] of [['transfer', L.lock, 'transfer cache'], ['central', L.centralLock, 'central free list']] as const) {
      if (offset === undefined) continue
      const at = manager + cls * L.stride + offset
      const word = memory.readU32(at)
      if (word === undefined || !(word & SPINLOCK_HELD)) continue
      const label = `${what} lock of class ${cls} (${heap.classes.size[cls]} B)`
      out.push({kind, tcmallocClass: cls, label, name: `${label} at ${hex(at)}`, address: at, word, sizeClass: compactOf.get(cls) ?? 0})
    }
  }
  return out
}

/**
 * Marks the warnings about what a held lock or a thread inside tcmalloc was changing: a class's
 * transfer cache entry and its slot array while its transfer cache or central free list lock was
 * held, the span records of that class while its central free list lock was held, the per-thread
 * cache of a thread inside tcmalloc, and, while pageheap_lock was held, every span, page-map and
 * back-end warning (the page allocator, the page map and the span records are what it guards). A
 * CPU slab header locked for a drain is a change under way by its nature.
 */
function markStructuresInFlight(heap: GoogleHeap, inside: ThreadInAllocator[], held: Held[]): void {
  const ranges: StructureInFlight[] = []
  const records = new Map<number, string>()
  const L = heap.layout.transferCache
  const manager = heap.globals.at.transferCache
  const centralWhy = new Map<number, string>()
  for (const l of held) {
    if (l.kind === 'page' || manager === null) continue
    const entry = manager + l.tcmallocClass * L.stride
    const why = `the ${l.label} was held`
    ranges.push({start: entry, end: entry + L.stride, why})
    if (l.kind === 'central') centralWhy.set(l.tcmallocClass, why)
  }
  for (let s = 0; s < heap.spans.count; s++) {
    const why = centralWhy.get(heap.spans.tcmallocClass[s]!)
    if (why !== undefined) records.set(heap.spans.record[s]!, why)
  }
  const insideTids = new Set(inside.map(t => t.tid))
  const threadCacheBytes = heap.shift.threadCacheList + heap.shift.numClasses * heap.layout.threadCache.freeListStride
  for (const c of heap.frontCaches) {
    if (c.cpu === null && c.tid !== null && insideTids.has(c.tid)) ranges.push({start: c.address, end: c.address + threadCacheBytes, why: `thread ${c.tid} was inside tcmalloc`})
  }
  const page = held.find(l => l.kind === 'page')
  const pageWhy = page ? `${page.label} was held` : undefined
  markInFlight(heap.warnings, {
    records,
    ranges,
    byKind: w =>
      w.kind === 'per-cpu' && / is locked \(a drain was under way\)/.test(w.message)
        ? 'a drain of the CPU slab was under way'
        : pageWhy !== undefined && (w.kind === 'span' || w.kind === 'page-map' || w.kind === 'back-end')
          ? pageWhy
          : undefined,
  })
}

/** The process's figures (GetNumericProperty) that damage or a structure in flight make bounds. */
export function googleTouchedFigures(heap: GoogleHeap, activity: AllocatorActivity, bytesBehind: number): TouchedFigure[] {
  return touchedFiguresOf(heap.damage, activity, bytesBehind, {
    allocator: 'tcmalloc',
    live: 'generic.current_allocated_bytes',
    rows: [
      {property: heap.perCpuActive ? 'tcmalloc.cpu_free' : 'tcmalloc.thread_cache_free', damagedStructure: heap.perCpuActive ? /^the per-CPU slab/ : /^thread cache/, guard: 'threads'},
      {property: 'tcmalloc.transfer_cache_free', damagedStructure: /^the (sharded )?transfer cache/, guard: 'class-lock'},
      {property: 'tcmalloc.central_cache_free', damagedStructure: /^span/, guard: 'class-lock'},
      {property: 'tcmalloc.page_heap_free', damagedStructure: /^page/, guard: 'page-lock'},
      {property: 'tcmalloc.page_heap_unmapped', damagedStructure: /^page/, guard: 'page-lock'},
    ],
    lockWhy: {'class-lock': 'a transfer cache or central free list lock was held', 'page-lock': 'pageheap_lock was held'},
  })
}
