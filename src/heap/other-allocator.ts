/**
 * Memory of an allocator other than the one the heap model reads, in the same process: glibc's
 * malloc, when something bypassed TCMalloc (a library calling glibc's malloc through its own
 * handle, or memory allocated before TCMalloc was loaded). Such a heap is no span of the slot
 * table: the memory query carves its ranges out of the mappings that hold them and tells its
 * parts, and nothing else reads it.
 */
export interface OtherAllocatorHeap {
  /** `glibc malloc, main arena`. */
  allocator: string
  /** Where its structures were found (`main_arena at 0x7f…c60 (libc.so.6's data)`). */
  foundAt: string
  /** Its address ranges, sorted and apart: the bytes it takes from the mappings. Empty when its heap could not be proven (notes say why). */
  ranges: Array<{start: number; end: number}>
  /** The ranges' bytes split by what they hold; they add up to the ranges' bytes. */
  parts: OtherAllocatorPart[]
  /** The allocator's own counters of the same bytes, as the core holds them. */
  counters: Array<{property: string; bytes: number}>
  /** What was not proven or not walked, one sentence each. */
  notes: string[]
}

export interface OtherAllocatorPart {
  part: string
  bytes: number
  /** The allocator's blocks (chunks) in the part. */
  blocks: number
  note?: string
}

/** What a search for another allocator is told of the process by the layers above the core. */
export interface OtherAllocatorInputs {
  /** Ranges the heap model's spans take, sorted by start: no other allocator's block lies in them. */
  spans: {count: number; start: (i: number) => number; end: (i: number) => number}
  /** The threads' TLS blocks, where a per-thread cache pointer may lie. */
  tls: ReadonlyArray<{start: number; end: number}>
}
