import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Program} from '../program/program.js'
import type {TcmallocHeap} from './heap.js'
import type {AllocatorMetadata} from '../heap/heap-model.js'
import {mergeIntervals, type Interval} from '../heap/interval.js'
import {SPAN} from './layout.js'
import {staticMemberByPosition} from './static-positions.js'
import {spanIndexAt} from '../heap/slot-table.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'

/* AllocatorMetadata.how here: one line per PageHeapAllocator: found how, free records, tail bytes. */

const SYM = {
  spanAllocator: '_ZN8tcmalloc6Static15span_allocator_E',
  stacktraceAllocator: '_ZN8tcmalloc6Static21stacktrace_allocator_E',
  threadcacheAllocator: '_ZN8tcmalloc21threadcache_allocatorE',
  /** STLPageHeapAllocator<StackTraceTable::Entry, void>::underlying_ (exported, unique): its PageHeapAllocator at +0. */
  stackTraceEntryAllocator: '_ZN8tcmalloc20STLPageHeapAllocatorINS_15StackTraceTable5EntryEvE11underlying_E',
}

/** PageHeapAllocator<T>: free_area_ @0, free_avail_ @8, free_list_ @16, inuse_ @24 (32 bytes). */
const PHA = {freeArea: 0, freeAvail: 8, freeList: 16, inuse: 24, size: 32}
/** PageHeapAllocator grabs metadata in kAllocIncrement (128 KiB) pieces: the unused tail is smaller. */
const ALLOC_INCREMENT = 128 * 1024
/** StackTrace {size, depth, stack[kMaxStackDepth = 31]} (§11). */
const STACK_TRACE_SIZE = 264
/** StackTraceTable::Entry {Entry* next; StackTrace trace}: 272 bytes. */
const STACK_TRACE_ENTRY_SIZE = 8 + STACK_TRACE_SIZE
/** A walk of a free list stops here (and says so): no allocator has this many freed records. */
const MAX_FREE_RECORDS = 1 << 22

/**
 * TCMalloc's metadata lives in memory it got from the system like the heap (the brk heap, mmap),
 * interleaved with spans, so it would be scanned as roots with every anonymous mapping. It must
 * not be: freed Span and ThreadCache records keep stale pointers to objects that were freed and
 * maybe reallocated, which would make real leaks look reachable. Collected here, exactly:
 * - Span records of every span in the table, and the freed ones on span_allocator_'s free list;
 * - ThreadCache objects, live (thread_heaps_ list) and freed (threadcache_allocator's free list);
 * - StackTraces of sampled spans;
 * - the StackTraceTable entries a heap profile (GetHeapSample, pprof's /pprof/heap) made and freed:
 *   each holds a copy of a whole StackTrace, and a sampled StackTrace is a copy of a stack local
 *   whose words past depth are stale stack contents: heap pointers among them (on
 *   fixtures/arm64/heapdemo-2.10-sampled an entry held the only other copy of a deliberate leak's
 *   address, 0xe74420, 12 words into its stack array);
 * - page-map leaves and interior nodes;
 * - the PageHeap itself (A–D allocate it as metadata);
 * - each allocator's current 128 KiB block (the one free_area_ points into: records and unused tail).
 * When an allocator (its free list) cannot be found, conservatively 128 KiB on either side of each
 * of its live records instead, with a warning.
 * Not collected (they hold no pointer to a heap object, so scanning them cannot hide a leak):
 * std::set nodes of the large-span sets (Span pointers), heap-growth StackTraces outside the
 * current block (code addresses up to depth; the words past it are the record's earlier contents,
 * zeros unless a freed StackTrace's), the metadata chunk's never-used tail (zeros). Nor is the
 * emergency-malloc arena (2.5.90+, full libtcmalloc only: the unwinder's own allocations while a
 * sample is taken), which the model does not locate.
 */
export function allocatorMetadata(program: Program, heap: TcmallocHeap, warnings: Warnings): AllocatorMetadata {
  const memory = program.core.memory
  const {globals, spans} = heap
  const {layout} = globals
  const list: Interval[] = []
  const how: string[] = []
  const add = (start: number, bytes: number) => {
    if (bytes > 0) list.push({start, end: start + bytes})
  }

  for (let s = 0; s < spans.count; s++) {
    add(spans.record[s]!, SPAN.size)
    if (spans.sampled[s] && spans.freeHead[s]) add(spans.freeHead[s]!, STACK_TRACE_SIZE)
  }
  for (const c of heap.threadCaches) add(c.address, layout.threadCache.objectSize)
  add(globals.pageHeap, layout.pageHeap.size)
  for (const node of pageMapNodes(memory, globals.pageHeap + layout.pageHeap.pagemap, layout.pageMap)) list.push(node)

  const sym = (name: string) => program.symbolAddress(name, [heap.module.loaded])?.address
  const inHeap = (p: number) => spanIndexAt(spans, heap.pageSize, p) >= 0
  const spanAt = staticMemberByPosition(program, globals, 'span_allocator_')
  const stacktraceAt = staticMemberByPosition(program, globals, 'stacktrace_allocator_')
  const allocators: Array<{name: string; at: number | undefined; how: string; record: number; live: number[]}> = [
    {name: 'span_allocator_', ...locate(sym(SYM.spanAllocator), spanAt), record: SPAN.size, live: Array.from(spans.record)},
    {name: 'stacktrace_allocator_', ...locate(sym(SYM.stacktraceAllocator), stacktraceAt), record: STACK_TRACE_SIZE, live: []},
    {name: 'threadcache_allocator', at: sym(SYM.threadcacheAllocator), how: 'symbol', record: layout.threadCache.objectSize, live: heap.threadCaches.map(c => c.address)},
    {name: 'StackTraceTable::Entry allocator', at: sym(SYM.stackTraceEntryAllocator), how: 'symbol', record: STACK_TRACE_ENTRY_SIZE, live: []},
  ]
  for (const a of allocators) {
    const found = a.at === undefined ? 'not found (no symbol)' : readPageHeapAllocator(memory, a.at, a.record, inHeap)
    if (typeof found === 'string') {
      // Freed records lie in the allocator's 128 KiB blocks among the live ones: without the free
      // list, cut conservatively a block's length on either side of every live record (it may
      // take some of a neighbouring mapping too). Freed StackTraces hold only code addresses.
      for (const r of a.live) add(r - ALLOC_INCREMENT, 2 * ALLOC_INCREMENT)
      if (a.live.length) warnings.add('metadata', `${a.name}${a.at === undefined ? '' : ` at ${hex(a.at)} (${a.how})`}: ${found}; 128 KiB around each of its ${a.live.length} live records not scanned as roots instead`, ...(a.at === undefined ? [] : [a.at]))
      how.push(`${a.name}: ${found}${a.live.length ? '; 128 KiB around each live record left out (conservative)' : ''}`)
      continue
    }
    const at = a.at!
    for (const r of found.freeRecords) add(r, a.record)
    // The block being carved: [free_area_ + free_avail_ − kAllocIncrement, free_area_ + free_avail_),
    // its records live or freed, its tail unused. Earlier blocks are covered record by record.
    if (found.freeArea) add(found.freeArea + found.freeAvail - ALLOC_INCREMENT, ALLOC_INCREMENT)
    how.push(`${a.name} at ${hex(at)} (${a.how}): ${found.inuse} in use, ${found.freeRecords.length} freed, ${found.freeAvail} bytes unused`)
    if (found.truncated) warnings.add('metadata', `${a.name} free list at ${hex(at)} ends early (loops, leaves the core or exceeds ${MAX_FREE_RECORDS})`, at)
  }
  return {intervals: mergeIntervals(list), how}
}

function locate(bySymbol: number | undefined, byPosition: {at: number; how: string}): {at: number; how: string} {
  return bySymbol !== undefined ? {at: bySymbol, how: 'symbol'} : byPosition
}

interface PageHeapAllocatorState {
  freeArea: number
  freeAvail: number
  inuse: number
  freeRecords: number[]
  truncated: boolean
}

/** Reads and checks one PageHeapAllocator; a string says why it is not one. */
function readPageHeapAllocator(memory: AddressSpace, at: number, record: number, inHeap: (p: number) => boolean): PageHeapAllocatorState | string {
  const buf = memory.readBytes(at, PHA.size)
  if (!buf) return 'not in the core'
  const u64 = (off: number) => u64le(buf, off)
  const freeArea = u64(PHA.freeArea)
  const freeAvail = u64(PHA.freeAvail)
  const head = u64(PHA.freeList)
  const inuse = buf.readInt32LE(PHA.inuse)
  if (freeAvail >= ALLOC_INCREMENT || (freeArea === 0 && freeAvail !== 0) || (freeArea !== 0 && !memory.isReadable(freeArea, Math.max(1, freeAvail))))
    return `free_area_ ${hex(freeArea)} / free_avail_ ${freeAvail} are not a PageHeapAllocator's`
  if (inuse < 0) return `inuse_ ${inuse} is negative`
  const freeRecords: number[] = []
  let p = head
  let truncated = false
  while (p !== 0) {
    if (freeRecords.length >= MAX_FREE_RECORDS || p % 8 !== 0 || inHeap(p) || !memory.isReadable(p, record)) {
      truncated = true
      break
    }
    freeRecords.push(p)
    const next = memory.readU64(p)
    if (next === undefined || next === p) {
      truncated = next === p
      break
    }
    p = next
  }
  return {freeArea, freeAvail, inuse, freeRecords, truncated}
}

/** Addresses of the page map's nodes below its root (PageMap2: leaves; PageMap3: interior nodes and leaves). */
function pageMapNodes(memory: AddressSpace, at: number, pm: TcmallocHeap['globals']['layout']['pageMap']): Interval[] {
  const out: Interval[] = []
  const levels = pm.kind === 2 ? [pm.rootBits, pm.leafBits] : [pm.interiorBits, pm.interiorBits, pm.leafBits]
  const walk = (node: number, level: number) => {
    const entries = 2 ** levels[level]!
    if (level > 0) out.push({start: node, end: node + entries * 8})
    if (level === levels.length - 1) return
    const buf = memory.readBytes(node, entries * 8)
    if (!buf) return
    for (let i = 0; i < entries; i++) {
      const v = u64le(buf, i * 8)
      if (v !== 0 && v % 8 === 0) walk(v, level + 1)
    }
  }
  if (pm.kind === 2) walk(at, 0)
  else {
    const root = memory.readU64(at)
    if (root) {
      out.push({start: root, end: root + 2 ** pm.interiorBits * 8})
      walk(root, 0)
    }
  }
  return out
}

/** TCMalloc's static state inside its module's data (or the executable's, when linked statically): the page heap, central cache and size map. */
export function allocatorStatics(heap: TcmallocHeap): Interval[] {
  const {globals} = heap
  const {layout, sizes} = globals
  const centralCount = Math.max(sizes.count, layout.central.count)
  return mergeIntervals([
    {start: globals.pageHeap, end: globals.pageHeap + layout.pageHeap.size},
    {start: globals.centralCache, end: globals.centralCache + centralCount * layout.central.stride},
    {start: globals.sizeMap, end: globals.sizeMap + layout.sizeMap.size},
  ])
}
