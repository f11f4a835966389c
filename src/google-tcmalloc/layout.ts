/**
 * Where google/tcmalloc keeps what toma reads, for one snapshot family: byte offsets on x86-64
 * (an aarch64 build of fce3f55 has the same, by its DWARF: docs/AARCH64.md),
 * read from the DWARF of a build of that snapshot (docs/GOOGLE-TCMALLOC.md says which build and
 * how). google/tcmalloc promises no layout between commits, so each family is data of its own,
 * keyed by the span of history it covers; a build whose layout is not here is not guessed at.
 */
export interface GoogleLayout {
  family: string
  /** The commits the family covers, in words (for describe and the error when none fits). */
  covers: string
  /**
   * The build mode this layout is of, where the mode moves fields: from 77fbeb5 (2026-08) a debug
   * build's TList<T>::Elem keeps a `list_` pointer that NDEBUG takes out, so Span, PageTracker and
   * every list head move. Absent where both modes lay the records out alike.
   */
  build?: 'debug' | 'release'
  pageMap: {
    /** PageMap2 (root array of leaves) until 77fbeb5 (2026-08), PageMap3 (root, mid, leaf) after. */
    levels: 2 | 3
    /** Since da43087 (2025-02) a leaf's span pointers carry the size class in bits 48-63. */
    packed: boolean
    /** PageMap2's leaf bits (15 in every build but small-but-slow); PageMap3 derives its own. */
    leafBits?: number
  }
  span: {
    size: number
    embedCount: number
    freelist: number
    allocated: number
    cacheSize: number
    /** cache_size_ is a 4-bit field sharing its byte with nonempty_index_ (2024-2025), or a whole byte. */
    cacheSizeBits: 4 | 8
    /** Where first_page_ and the page count are: packed bitfields (2025 on) or whole fields (before). */
    record:
      | {
          kind: 'bitfields'
          /** The 64-bit word whose low bits are first_page_ (48 − kPageShift bits wide); the flags follow them. */
          bitsWord: number
          /** Bit positions after first_page_'s last bit. */
          isLargeAfter: number
          sampledAfter: number
          /** small_num_pages_ (6 bits) after first_page_ (2026), or null: SmallSpanState's num_pages, the low 6 bits of the union's first word (2024-2025). */
          smallNumPagesAfter: number | null
        }
      | {
          kind: 'fields'
          /** PageId first_page_, Length num_pages_ (64-bit each); sampled_ a bit of the flags byte; the SampledAllocation pointer in the union. */
          firstPage: number
          numPages: number
          flagsByte: number
          sampledBit: number
        }
    /** The union: LargeOrSampledState {num_pages, SampledAllocation*} (2024 on), or the SampledAllocation pointer (before). */
    union: number
    /** The embedded ObjIdx cache and the bitmap, in the union (after SmallSpanState's num_pages word in 2024-2025). */
    cache: number
    /** Entries of the embedded ObjIdx cache (kCacheSize; at most, where the cache may run past the record). */
    cacheEntries: number
    /** Bits of the free-object bitmap (kBitmapSize). */
    bitmapBits: number
  }
  /** What depends on the page size, by kPageShift: the class count sizes the arrays before these fields. */
  shifts: Record<string, ShiftLayout>
  /**
   * TcmallocSlab: its fields from its start. cpuCount is its CPU states' length where it keeps one
   * (2025 on); before, it keeps no CPU count and the CPUs are read while their slabs are there.
   */
  slab: {
    slabsAndShift: number
    cpuCount?: number
    /**
     * A CPU's header per class: {u16 current, u16 end} (4 bytes, 2024 on), whose begin is in the
     * slab's shared begins_ array (this field: the pointer to it); or {u16 current, end_copy,
     * begin, end} (8 bytes, before), each header with its own begin.
     */
    headerBytes: 4 | 8
    headerEnd: number
    headerBegin?: number
    begins?: number
  }
  /**
   * TransferCacheManager::cache_[class].tc: slot_info_ {used, capacity}, slots_, and owner_ (the
   * manager itself: the signature's anchor); where known, its SpinLock lock_ and its CentralFreeList's
   * (freelist_do_not_access_directly_.lock_), each the lock word (absl's, bit 0 held) of that
   * class's transfer cache and central free list. Absent: that lock is not read (not known).
   */
  transferCache: {stride: number; slotInfo: number; slots: number; owner: number; lock?: number; centralLock?: number}
  /**
   * Static::sharded_transfer_cache_ (a ShardedTransferCacheManager: transfer caches per L3 cache,
   * on where the build or an experiment turns them on), where known: its shards_ array and
   * num_shards_; a Shard's size, its transfer_caches pointer (an array of one cache per class)
   * and its initialized flag; and such a cache's size, slot_info_, slots_ and its lock_ (where read).
   */
  shardedTransferCache?: {shards: number; numShards: number; shardStride: number; shardCaches: number; shardInitialized: number; cacheStride: number; slotInfo: number; slots: number; lock?: number}
  /** MetadataObjectAllocator<Span> (Static::span_allocator_): free_list_, whose records chain through their first word. */
  spanAllocatorFreeList: number
  /** MetadataObjectAllocator<Span>::metadata_lock_, its own SpinLock (2024-12 on); absent where span records are under pageheap_lock (PageHeapAllocator). */
  spanAllocatorLock?: number
  threadCache: {freeListStride: number; freeListHead: number; freeListLength: number}
  /**
   * SampledAllocation: its StackTrace's requested_size, depth and stack[]; and proxy, the object of
   * the request's class that tcmalloc keeps allocated beside a small sampled object while it lives
   * (allocation_sampling.cc), where the family has it: every family before google/tcmalloc
   * b1c7c6e4 (2026-07, "Remove fragmentation profile"), none from then.
   */
  sampledAllocation?: {size: number; requestedSize: number; depth: number; stack: number; maxDepth: number; proxy?: number}
}

/** The fields whose place moves with kNumClasses, so with the page size. */
export interface ShiftLayout {
  /** kNumClasses (base classes × partitions, plus the expanded cold ones). */
  numClasses: number
  /** SizeMap: class_to_size_ (uint32) and class_to_pages_ (uint8). */
  classToSize: number
  classToPages: number
  /** CpuCache::freelist_ (the TcmallocSlab) within Static::cpu_cache_. */
  slabInCpuCache: number
  /**
   * CpuCache::resize_ within Static::cpu_cache_ (a pointer to one ResizeInfo per CPU), a
   * ResizeInfo's size (its per_class[kNumClasses] makes it move with the page size) and its
   * SpinLock `lock`, taken to resize or steal from that CPU's cache; absent where not read.
   */
  cpuResize?: {resize: number; stride: number; lock: number}
  /** ThreadCache::list_[] within a ThreadCache, and next_. */
  threadCacheList: number
  threadCacheNext: number
  /** ThreadCache::size_: the bytes its lists hold, by its own count (cross-checked). */
  threadCacheSize: number
  /** The huge-page-aware back end (its bitmaps are sized by pages per hugepage), absent where not read. */
  backEnd?: {
    /** PageAllocator (at Static::page_allocator_): normal_impl_[2], sampled_impl_[2], cold_impl_, has_cold_impl_. */
    normalImpl: number
    sampledImpl: number
    /** Entries of normal_impl_ and sampled_impl_ (arrays of two from 2025, one and a plain pointer before). */
    normalImpls: number
    sampledImpls: number
    coldImpl: number
    hasColdImpl: number
    /** selsan_impl_, an instance of its own where SelSan runs (2024-12 to 2025; null pointer otherwise). */
    selsanImpl?: number
    /** HugePageAwareAllocator: regions_.n_, alloc_.free_.root_, cache_.cache_.root_. */
    regionsCount: number
    allocatorFreeRoot: number
    cacheRoot: number
    /** HugeCache::size_: the hugepages the cache holds, by its own count (cross-checked). */
    cacheHugePages: number
    /** PageTracker: its size, location_ (hugepage number), the used-pages bitmap, released_by_page_. */
    trackerSize: number
    trackerLocation: number
    trackerUsed: number
    trackerReleased: number
    /**
     * HugeRegionSet's regions (1 GiB slabs that large blocks are served from in big heaps), where
     * known: the list head's place in the HugePageAwareAllocator (TList<HugeRegion>::head_, whose
     * next_ is its first word), and in a HugeRegion its used-pages bitmap, location_ (its first
     * hugepage), backed_[] (a bool a hugepage) and how many pages it spans (the bitmap's bits).
     * A region is a list element: its next_ is its first word too.
     */
    regions?: {listHead: number; bitmap: number; location: number; backed: number; pages: number}
    /**
     * The 2023 LifetimeBasedAllocator's own region set (lifetime_allocator_.lifetime_region_
     * .regions_.n_), off by default: where it holds any region, a warning says its pages are not read.
     */
    lifetimeRegionsCount?: number
    /** HugeAddressMap::Node: size, range_ {first, n}, left_, right_. */
    nodeSize: number
    nodeFirst: number
    nodeCount: number
    nodeLeft: number
    nodeRight: number
  }
}

/** Bytes of CompactSizeClass, the page map's per-page class: one byte while kNumClasses fits in one, else two. */
export const classBytesOf = (shift: ShiftLayout): 1 | 2 => (shift.numClasses > 256 ? 2 : 1)
