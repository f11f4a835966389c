/**
 * glibc malloc's structures on 64-bit Linux (x86-64, aarch64), as glibc 2.26 to 2.41 lay them out
 * (malloc/malloc.c; checked with `ptype/o` in libc6-dbg 2.36, fixtures/generate-glibcheap.sh):
 * what this model reads and nothing more.
 */

/** A chunk: prev_size, then size with its three flag bits; the user's block starts after the two. */
export const CHUNK_HEADER = 16
export const MIN_CHUNK = 32
export const MALLOC_ALIGNMENT = 16
/** Size flags: the chunk before is in use, this chunk is its own mapping, it belongs to a thread's arena. */
export const PREV_INUSE = 1
export const IS_MMAPPED = 2
export const NON_MAIN_ARENA = 4

/** struct malloc_state (main_arena): fastbinsY[10], top, bins[254] (127 pairs fd/bk), next, system_mem. */
export const ARENA = {
  fastbins: 16,
  fastbinCount: 10,
  top: 96,
  bins: 112,
  binPairs: 127,
  next: 2160,
  systemMem: 2184,
  size: 2200,
  flags: 4,
} as const
/** main_arena.flags: the arena's memory is not one contiguous sbrk region. */
export const NONCONTIGUOUS_BIT = 2

/**
 * struct malloc_par (mp_), from sbrk_base: the fields before it (n_mmaps, mmapped_mem) and after
 * it (the tcache's bins and count) sit at the same distance in every version since the tcache
 * (2.26); the fields further before it changed (2.35 added the huge-page ones).
 */
export const PAR_FROM_SBRK_BASE = {nMmaps: -36, mmappedMem: -16, tcacheBins: 8, tcacheCount: 24} as const

/** struct tcache_perthread_struct: uint16 counts[64], then entries[64]; its chunk is 0x290 bytes. */
export const TCACHE = {bins: 64, counts: 0, entries: 128, chunkSize: 0x290} as const

/** A fastbin's or tcache bin's chunk size: bin i holds chunks of 32 + 16 i bytes. */
export const binChunkSize = (i: number) => MIN_CHUNK + MALLOC_ALIGNMENT * i
