import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {memoryAccounting} from './memory-accounting.js'
import {pageHeapShape} from './page-heap-shape.js'
import {pageHeapSplitters} from './page-heap-splitters.js'
import {hugePageFillReport} from './huge-page-fill.js'
import {spanOccupancy} from './span-occupancy.js'

/**
 * Where the memory went (issue 53): every byte of the writable mappings once, how full each size
 * class's spans are and what pins the nearly empty ones, and the page heap's free runs. From the
 * index (spans, states, names, holders, thread caches, the allocator's counters and metadata in
 * the summary) and the core's segments and threads: nothing is modelled again.
 */
export function memoryReport(program: Program, index: HeapIndex, options: {examples: number; splitters: number}) {
  const allocator = index.meta.summary.allocator.kind ?? null
  return {
    allocator,
    /** What this report does not tell yet for the allocator that ran (null: everything above is exact for it). */
    notYet: allocator === 'gperftools' || allocator === 'google/tcmalloc' ? null : `${allocator ?? 'this allocator'}: its figures are not split out yet`,
    accounting: memoryAccounting(program, index),
    fragmentation: spanOccupancy(index, options.examples),
    pageHeap: pageHeapShape(index),
    /** Live spans between two free runs, largest run their freeing makes first, at most `splitters` (null: not for this allocator). */
    splitters: pageHeapSplitters(index, options.splitters),
    /** The huge-page filler's hugepages by pages used, and what holds those a few pages keep (null: no filler). */
    hugePageFill: hugePageFillReport(index),
  }
}

export type MemoryReport = ReturnType<typeof memoryReport>
