import {PF_W} from '../core/core-header.js'
import type {Program} from '../program/program.js'
import type {OtherAllocatorInputs} from '../heap/other-allocator.js'
import {IS_MMAPPED} from './layout.js'

const PAGE = 4096

/**
 * Chunks glibc mapped on their own (requests above its mmap threshold): at a page start of an
 * anonymous writable mapping, outside the heap model's spans and `heap`, a header of prev_size 0
 * and a size of whole pages with only the mmapped bit, that fits in the mapping (the kernel may
 * have merged the chunk's mapping with its neighbours). A page inside a chunk found is not looked
 * at. What is found is proven only by the caller, against mp_'s count and bytes.
 */
export function mmappedChunkCandidates(program: Program, inputs: OtherAllocatorInputs, heap: {start: number; end: number}): Array<{start: number; end: number}> {
  const memory = program.core.memory
  const out: Array<{start: number; end: number}> = []
  const spans = inputs.spans
  let s = 0
  for (const seg of memory.segments) {
    if (!(seg.flags & PF_W) || program.core.fileAt(seg.start) || program.core.moduleAt(seg.start)) continue
    const presentEnd = seg.start + seg.presentSize
    for (let p = seg.start; p + PAGE <= presentEnd; ) {
      while (s < spans.count && spans.end(s) <= p) s++
      if (s < spans.count && spans.start(s) <= p) {
        p = Math.ceil(spans.end(s) / PAGE) * PAGE
        continue
      }
      if (p >= heap.start && p < heap.end) {
        p = Math.ceil(heap.end / PAGE) * PAGE
        continue
      }
      const prevSize = memory.readU64(p)
      const head = memory.readU64(p + 8)
      const size = head === undefined ? 0 : head - (head % 8)
      if (prevSize === 0 && head !== undefined && head % 8 === IS_MMAPPED && size > 0 && size % PAGE === 0 && p + size <= seg.end) {
        out.push({start: p, end: p + size})
        p += size
      } else p += PAGE
    }
  }
  return out
}
