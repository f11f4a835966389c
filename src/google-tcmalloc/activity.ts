import {hex} from '../errors.js'
import type {AllocatorActivity, AllocatorLock, ThreadInAllocator, TouchedFigure} from '../heap/heap-model.js'
import {lockHolders, markInFlight, threadsInAllocator, type StructureInFlight} from '../heap/inside-allocator.js'
import {touchedFiguresOf} from '../heap/touched-figures.js'
import type {Program} from '../program/program.js'
import {MAX_CPUS, shardedTransferCaches} from './front-end.js'
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
/** The per-CPU cache's code that takes a CPU's resize lock (resizing slabs or classes, stealing, reclaiming). */
const CPU_CACHE_CODE = /CpuCache/
/** The span allocator's code, which takes its own lock to hand out or take back a span record. */
const SPAN_ALLOCATOR_CODE = /MetadataObjectAllocator|Span::(New|Delete)/

/** absl::base_internal::SpinLock's lockword_: bit 0 is kSpinLockHeld; the others are flags and its waiters' wait time. */
const SPINLOCK_HELD = 1

/** A lock word as read, with what it guards (its kind, tcmalloc's own class, the CPU) and its name without its address (for the reasons it gives). */
export type LockRead = Omit<AllocatorLock, 'heldBy' | 'waiting'> & {kind: 'page' | 'transfer' | 'sharded' | 'central' | 'cpu' | 'span'; tcmallocClass: number; label: string}

/**
 * Which threads were inside tcmalloc and which of its locks were held when the core was taken, and
 * the warnings about structures they were changing marked in flight. Unwinds every thread.
 */
export function googleActivity(program: Program, heap: GoogleHeap): AllocatorActivity {
  const threads = threadsInAllocator(program, heap.module, ALLOCATOR_CODE)
  const pageLock = pageLockAddress(program, heap)
  const held = googleLocksRead(program, heap).filter(l => l.word & SPINLOCK_HELD)
  const code = {page: PAGE_LEVEL_CODE, central: CENTRAL_CODE, transfer: TRANSFER_CODE, sharded: TRANSFER_CODE, cpu: CPU_CACHE_CODE, span: SPAN_ALLOCATOR_CODE}
  const locks = held.map(({kind, tcmallocClass: _, label: __, ...l}) => ({...l, ...lockHolders(threads, code[kind], WAITING_CODE)}))
  markStructuresInFlight(heap, threads, held)
  return {threads, locks, pageHeapLockKnown: pageLock !== undefined}
}

const pageLockAddress = (program: Program, heap: GoogleHeap) => program.symbolAddress(PAGEHEAP_LOCK, [heap.module.loaded])?.address

/**
 * Every lock word toma reads, held or not: pageheap_lock (the page allocator, the page map, span
 * records) by its symbol; per size class its transfer cache's and central free list's lock_, where
 * the layout places them, and each shard's of the sharded transfer caches; the span allocator's own lock (span records handed out and taken back,
 * 2024-12 on); and per CPU its ResizeInfo's lock (resizing or stealing from that CPU's cache),
 * where the layout places it and the slab counts its CPUs. A family whose layout lacks a
 * lock: not read (pageHeapLockKnown says nothing of the others). A lock's size class is the compact
 * one the index keeps (0 where no span of the class is in use); its name gives tcmalloc's own.
 */
export function googleLocksRead(program: Program, heap: GoogleHeap): LockRead[] {
  const memory = program.core.memory
  const out: LockRead[] = []
  const pageLock = pageLockAddress(program, heap)
  if (pageLock !== undefined) {
    const word = memory.readU32(pageLock)
    if (word !== undefined) out.push({kind: 'page', tcmallocClass: 0, label: 'pageheap_lock', name: `pageheap_lock at ${hex(pageLock)}`, address: pageLock, word, sizeClass: null})
  }
  const spanAllocator = heap.globals.at.spanAllocator
  if (spanAllocator !== null && heap.layout.spanAllocatorLock !== undefined) {
    const at = spanAllocator + heap.layout.spanAllocatorLock
    const word = memory.readU32(at)
    const label = "the span allocator's lock"
    if (word !== undefined) out.push({kind: 'span', tcmallocClass: 0, label, name: `${label} at ${hex(at)}`, address: at, word, sizeClass: null, spanRecords: true})
  }
  const manager = heap.globals.at.transferCache
  const L = heap.layout.transferCache
  const compactOf = new Map(heap.classOfCompact.map((c, i) => [c, i]))
  if (manager !== null) {
    for (let cls = 1; cls < heap.shift.numClasses; cls++) {
      for (const [kind, offset, what] of [['transfer', L.lock, 'transfer cache'], ['central', L.centralLock, 'central free list']] as const) {
        if (offset === undefined) continue
        const at = manager + cls * L.stride + offset
        const word = memory.readU32(at)
        if (word === undefined) continue
        const label = `${what} lock of class ${cls} (${heap.classes.size[cls]} B)`
        out.push({kind, tcmallocClass: cls, label, name: `${label} at ${hex(at)}`, address: at, word, sizeClass: compactOf.get(cls) ?? 0})
      }
    }
  }
  out.push(...shardedTransferCacheLocks(program, heap, compactOf), ...cpuResizeLocks(program, heap))
  return out
}

/** Each initialized shard's transfer cache lock_ of each class: read where the layout places it. */
function shardedTransferCacheLocks(program: Program, heap: GoogleHeap, compactOf: Map<number, number>): LockRead[] {
  const L = heap.layout.shardedTransferCache
  const manager = heap.globals.at.shardedTransferCache
  if (!L || L.lock === undefined || manager === null) return []
  const out: LockRead[] = []
  for (const {at: cache, shard, cls} of shardedTransferCaches(program.core.memory, manager, L, heap.shift.numClasses).caches) {
    const at = cache + L.lock
    const word = program.core.memory.readU32(at)
    if (word === undefined) continue
    const label = `sharded transfer cache lock of shard ${shard}, class ${cls} (${heap.classes.size[cls]} B)`
    out.push({kind: 'sharded', tcmallocClass: cls, label, name: `${label} at ${hex(at)}`, address: at, word, sizeClass: compactOf.get(cls) ?? 0})
  }
  return out
}

/** Each CPU's resize lock (CpuCache::resize_[cpu].lock): read only where the layout places it and the slab counts its CPUs. */
function cpuResizeLocks(program: Program, heap: GoogleHeap): LockRead[] {
  const memory = program.core.memory
  const R = heap.shift.cpuResize
  const cpuCache = heap.globals.at.cpuCache
  const cpuCount = heap.layout.slab.cpuCount
  if (!R || cpuCache === null || cpuCount === undefined || !heap.perCpuActive) return []
  const resize = memory.readU64(cpuCache + R.resize)
  const cpus = memory.readU64(cpuCache + heap.shift.slabInCpuCache + cpuCount)
  if (!resize || cpus === undefined || cpus > MAX_CPUS) return []
  const out: LockRead[] = []
  for (let cpu = 0; cpu < cpus; cpu++) {
    const at = resize + cpu * R.stride + R.lock
    const word = memory.readU32(at)
    if (word === undefined) continue
    const label = `per-CPU cache resize lock of CPU ${cpu}`
    out.push({kind: 'cpu', tcmallocClass: 0, label, name: `${label} at ${hex(at)}`, address: at, word, sizeClass: null, cpu})
  }
  return out
}

/**
 * Marks the warnings about what a held lock or a thread inside tcmalloc was changing: a class's
 * transfer cache entry and its slot array while its transfer cache or central free list lock was
 * held, a shard's cache of a class while its lock was held, the span records of that class while
 * its central free list lock was held, the per-thread cache of a thread inside tcmalloc, and, while
 * pageheap_lock was held, every span, page-map and back-end warning (the page allocator, the page
 * map and the span records are what it guards), a CPU's slab warnings while that CPU's resize lock
 * was held, and the freed span records' list while the span allocator's lock was held. A CPU slab
 * header locked for a drain is a change under way by its nature.
 */
function markStructuresInFlight(heap: GoogleHeap, inside: ThreadInAllocator[], held: LockRead[]): void {
  const ranges: StructureInFlight[] = []
  const records = new Map<number, string>()
  const L = heap.layout.transferCache
  const manager = heap.globals.at.transferCache
  const centralWhy = new Map<number, string>()
  const sharded = heap.layout.shardedTransferCache
  for (const l of held) {
    const why = `the ${l.label} was held`
    // A shard's cache of the class: the cache its lock is in.
    if (l.kind === 'sharded' && sharded) ranges.push({start: l.address - (sharded.lock ?? 0), end: l.address - (sharded.lock ?? 0) + sharded.cacheStride, why})
    if ((l.kind !== 'transfer' && l.kind !== 'central') || manager === null) continue
    const entry = manager + l.tcmallocClass * L.stride
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
  // A per-CPU warning names its CPU first ("CPU 3's slab header ..."): in flight while that CPU's resize lock was held.
  const cpuWhy = new Map(held.filter(l => l.cpu !== undefined).map(l => [l.cpu!, `the ${l.label} was held`]))
  const spanAllocator = held.find(l => l.kind === 'span')
  const spanAllocatorWhy = spanAllocator ? `${spanAllocator.label} was held` : undefined
  const cpuOf = (message: string) => Number(/^CPU (\d+)'s /.exec(message)?.[1] ?? NaN)
  markInFlight(heap.warnings, {
    records,
    ranges,
    byKind: w =>
      w.kind === 'per-cpu' && / is locked \(a drain was under way\)/.test(w.message)
        ? 'a drain of the CPU slab was under way'
        : w.kind === 'per-cpu' && cpuWhy.has(cpuOf(w.message))
          ? cpuWhy.get(cpuOf(w.message))
          : pageWhy !== undefined && (w.kind === 'span' || w.kind === 'page-map' || w.kind === 'back-end')
            ? pageWhy
            : spanAllocatorWhy !== undefined && w.kind === 'span' && /span_allocator_'s list/.test(w.message)
              ? spanAllocatorWhy
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
