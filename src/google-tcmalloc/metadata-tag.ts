import {PF_W} from '../core/core-header.js'
import type {Interval} from '../heap/interval.js'
import type {Program} from '../program/program.js'

/**
 * tcmalloc tags its address space (internal/memory_tag.h, every family read here): bits 42–44 of
 * an address it maps say what the memory is for, and MmapAligned keeps retrying until the kernel
 * gives it an address with the tag asked. kMetadata (3) is the arena all of its records come
 * from: span records, sample records, the peak-heap tracker's copies, thread caches, page-map
 * nodes. None of it is the program's: its words name objects for tcmalloc's bookkeeping (or
 * objects freed long ago), never for the program. The kernel places the program's own mappings
 * near the top of the address space (tag 7) or at the executable (tag 5): an anonymous writable
 * mapping wholly in tag 3 is tcmalloc's.
 */
const TAG_SHIFT = 2 ** 42
const TAGS = 8
const METADATA_TAG = 3

const tagOf = (address: number) => Math.floor(address / TAG_SHIFT) % TAGS

/** The core's anonymous writable mappings inside tcmalloc's metadata tag, and one line saying so. */
export function metadataTagSegments(program: Program): {intervals: Interval[]; how: string} {
  const intervals: Interval[] = []
  let bytes = 0
  for (const seg of program.core.memory.segments) {
    if (!(seg.flags & PF_W) || seg.end <= seg.start || program.core.fileAt(seg.start)) continue
    // Both ends in the tag, and no tag boundary between them (a region of 2^42 bytes is the whole tag).
    if (tagOf(seg.start) !== METADATA_TAG || tagOf(seg.end - 1) !== METADATA_TAG || seg.end - seg.start > TAG_SHIFT) continue
    intervals.push({start: seg.start, end: seg.end})
    bytes += seg.end - seg.start
  }
  return {intervals, how: `metadata arena (MemoryTag::kMetadata, address bits 42–44 = 3): ${intervals.length} mappings, ${Math.round(bytes / 2 ** 10)} KiB`}
}
