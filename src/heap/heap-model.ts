import type {Segment} from '../core/address-space.js'
import type {LoadedModule, Program} from '../program/program.js'
import type {DamageLog} from './damage.js'
import type {Interval} from './interval.js'
import type {SlotTable} from './slot-table.js'
import type {Warnings} from './warnings.js'
import type {RequestFit} from './request-fit.js'
import type {TakeOnce} from '../util/take-once.js'

/**
 * What an allocator model must provide: the one thing the layers above (graph, naming, index,
 * analysis) know of the allocator that ran. A model reads the allocator's structures from the core
 * and hands back the slot table with a state per slot, plus the few facts below; nothing above it
 * names the allocator's types. The models are listed in src/allocators.ts; gperftools TCMalloc's is
 * src/tcmalloc/model.ts.
 */
export interface HeapModel extends ModelledHeap {
  /** The allocator's name as messages give it ("TCMalloc's counters say ..."). */
  name: string
  /** Bytes of each size class, class 0 (no class: a span of its own) first as 0. */
  sizeClassSizes: Float64Array
  /** The allocator's own classes, whose unreferenced objects are no leak (its singletons). */
  internalClasses: RegExp
  /** Live slots the allocator's own structures say it holds for itself (google/tcmalloc: a sampled object's proxy): no leak either. */
  ownSlots: Uint32Array
  /** The module is the allocator's own library (not the executable of a static link). */
  ownLibrary: boolean
  /** What the allocator gives for a request, as data (request-fit.ts: fitsRequest; naming checks a length against it). */
  requestFit(): RequestFit
  /** The allocator's metadata outside its module's data: memory that is the allocator's, never a root. May add warnings. */
  metadata(program: Program, warnings: Warnings): AllocatorMetadata
  /** The allocator's static state inside its module's data: cut out of the roots with the metadata. */
  staticState(): Interval[]
  /** Threads inside the allocator and its locks held; marks the warnings about structures they were changing as in flight. Unwinds every thread. */
  activity(program: Program): AllocatorActivity
  /** The cross-check figures that damage or a structure in flight make bounds rather than exact counts. */
  touchedFigures(activity: AllocatorActivity, bytesBehindDamage: number): TouchedFigure[]
  /** In-use spans cut into objects of a size class, in address order (where damage looks for its culprit). */
  spansOfClass(sizeClass: number): number[]
  /** For the summary: the allocator, its version and where its globals were found. */
  describe(): AllocatorDescription
  /** For the summary: spans and bytes per kind of span. */
  spanKinds(): Record<string, {spans: number; bytes: number}>
  /** For the summary: live and free objects per size class of in-use spans, classes in first-seen order. */
  sizeClassUse(): SizeClassUse[]
}

/** What a model reads from the core: the slot table with a state per slot, and the allocator's own facts beside it. */
export interface ModelledHeap {
  pageSize: number
  /** Every span in address order with its object slots (slot-table.ts), and the per-span columns the index stores. */
  spans: SlotTable & SpanColumns
  /** One byte per object slot: LIVE, THREAD_CACHE, ... (states.ts). Shared memory: the dominator worker reads it. */
  state: Uint8Array
  /** The module holding the allocator's code and static data (roots, naming, the allocator's own objects). */
  module: AllocatorModule
  /** Per-thread caches of free objects (none when the allocator keeps none). */
  threadCaches: ThreadCache[]
  /** Slots held by thread caches, ascending, and the index in threadCaches of the cache holding each. */
  threadCacheObjects: Float64Array
  threadCacheOwner: Uint16Array
  /** Objects and bytes per state. */
  totals: StateTotals
  /** toma's figures beside the allocator's own counters of the same. */
  crossCheck: CrossCheck[]
  /** Allocations the allocator sampled, with their stacks (empty when it samples none). */
  sampled: SampledAllocations
  /** What the model found not as the allocator would have left it, and went on without. */
  warnings: Warnings
  /** Broken links, entries and lists its walks found (damage.ts). */
  damage: DamageLog
  /** The hugepages the allocator packs small spans into, one entry each (google/tcmalloc's huge-page filler); absent where it has none. */
  hugePageFill?: HugePageFill
  /**
   * The first word of every slot of an in-use span, as the model read them for its list walks
   * (NaN: not read), for the model stage to take (first-words.ts); absent where the model read none.
   */
  slotWords?: TakeOnce<Float64Array>
}

/**
 * The index's per-span columns besides the slot table, stored as the model gives them:
 * record (the address of the allocator's span descriptor, metadata), sizeClass (0: a span of its
 * own, not cut into classes), location (0 in use, 1 free, 2 free and returned to the system),
 * refcount (objects the allocator counts in use), sampled (1: the span holds a sampled allocation).
 */
export interface SpanColumns {
  record: Float64Array
  sizeClass: Uint8Array
  location: Uint8Array
  refcount: Uint16Array
  sampled: Uint8Array
}

/** Options of every model. */
export interface ModelOptions {
  /** The allocator's version as the user names it, when its own is not to be trusted. */
  version?: string
  /** Find the allocator's globals by their signatures alone (a test of the signatures). */
  signaturesOnly?: boolean
  progress?: (phase: string, done: number, total: number) => void
}

/** The module that holds the allocator (its library, or the executable when linked statically). */
export interface AllocatorModule {
  loaded: LoadedModule
  /** Writable segments of the module plus the anonymous .bss mapping that directly follows them. */
  dataSegments: Segment[]
  /** Executable address ranges of the module (for recognising code pointers). */
  isCode(addr: number): boolean
}

export interface ThreadCache {
  address: number
  /** The owning thread's LWP id; null when unknown. */
  tid: number | null
  /** Whether some thread's TLS pointer to its cache points here (null: TLS pointers not read). */
  inTls: boolean | null
  /** Bytes the allocator says this cache holds. */
  bytes: number
  objects: number
  /** The CPU whose cache it is, where caches are per CPU (google/tcmalloc's slabs); else absent or null. */
  cpu?: number | null
}

export interface StateTotals {
  /** Per state (states.ts). */
  objects: Float64Array
  bytes: Float64Array
  /** Tail bytes of spans cut into objects that fit no object. */
  spanWaste: number
  /**
   * A state's bytes split by the allocator's places where it keeps more than one of that state
   * (google/tcmalloc: per-CPU and per-thread caches; unsharded and sharded transfer caches; the
   * page heap's filler, regions and huge cache, and for returned pages its huge allocator), each
   * with the allocator's property counting the same bytes; absent where each state is one place.
   */
  places?: StatePlace[]
}

/**
 * The hugepages an allocator fills with spans of a few pages (google/tcmalloc's HugePageFiller, from
 * its page trackers), in address order: per hugepage its pages in use, its free pages given back to
 * the system, and its longest run of free pages (given back or not).
 */
export interface HugePageFill {
  pagesPerHugePage: number
  hugePages: Array<{start: number; used: number; released: number; longestFree: number}>
}

/** One place of a state: its objects and bytes, and the allocator's property of the same (for a place the allocator only prints, its stats line). */
export interface StatePlace {
  state: number
  place: string
  property: string
  objects: number
  bytes: number
}

/** One figure as toma counted it from the objects, and as the allocator's own counters in the core give it. */
export interface CrossCheck {
  name: string
  /** The allocator's property that reports the same figure. */
  property: string
  toma: number
  allocator: number
  /** Why the two figures cannot disagree (both rest on the same missing walk); absent when they are independent. */
  notIndependent?: string
}

/**
 * The allocations the allocator sampled, each with the stack it recorded: sample i is the one
 * object of span span[i]; its stack, innermost frame first, is pc[stackStart[i] .. stackStart[i + 1]).
 */
export interface SampledAllocations {
  /** Span index of each sampled object, ascending. */
  span: Uint32Array
  /** The bytes the program asked for. */
  requestedSize: Float64Array
  stackStart: Uint32Array
  pc: Float64Array
  /** Sample indexes in the order the allocator's own heap profile lists them. */
  order: Uint32Array
  /** The mean bytes between samples; null when not known. */
  period: number | null
}

/** Where the allocator's own bookkeeping lies outside its module's data, and how each part was found. */
export interface AllocatorMetadata {
  /** Sorted, merged ranges: memory that is the allocator's metadata, never the program's. */
  intervals: Interval[]
  /** One line per part: found how (for the report). */
  how: string[]
}

/** A thread that was running the allocator's code when the core was taken. */
export interface ThreadInAllocator {
  tid: number
  /** The allocator's frames on its stack, innermost first: pc and name. */
  frames: Array<{pc: number; name: string}>
  /** Whether frame 0 (the pc itself) is in the allocator (else it called out: a system call, a lock wait, a hook). */
  atPc: boolean
}

/** An allocator lock held when the core was taken, as its word says (gperftools: not 0; abseil's SpinLock in google/tcmalloc: bit 0). */
export interface AllocatorLock {
  name: string
  address: number
  /** The lock word as the allocator keeps it. */
  word: number
  /** The size class whose lists it guards; null: a lock of no class (the page-level lock, or a CPU's). */
  sizeClass: number | null
  /** The CPU whose cache it guards (google/tcmalloc's per-CPU resize lock); absent for every other lock. */
  cpu?: number
  /** Set on a lock of the allocator's span records alone (google/tcmalloc's span allocator's own), not the page-level lock. */
  spanRecords?: true
  /** Threads inside the code that takes it and not waiting for it, and threads waiting (as far as the frames tell). */
  heldBy: number[]
  waiting: number[]
}

export interface AllocatorActivity {
  threads: ThreadInAllocator[]
  locks: AllocatorLock[]
  /** Whether the page-level lock could be read at all: else "not held" is unknown. */
  pageHeapLockKnown: boolean
}

export interface TouchedFigure {
  property: string
  why: string
  inFlight: boolean
}

/** The allocator as the summary (and the index) describes it. */
export interface AllocatorDescription {
  kind: string
  version: string | null
  versionHow: string
  layoutGroup: string
  pageSize: number
  module: string
  moduleFile: string | null
  /** Each global the model located: its address (null: not found) and how it was found. */
  globals: Record<string, {address: string | null; how: string}>
  sizeClasses: number
}

export interface SizeClassUse {
  sizeClass: number
  size: number
  liveObjects: number
  liveBytes: number
  freeObjects: number
}
