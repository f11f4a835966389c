import {hex} from '../errors.js'
import type {AllocatorActivity, AllocatorDescription, SizeClassUse, TouchedFigure} from '../heap/heap-model.js'
import {sizeClassUseOf} from '../heap/size-class-use.js'
import {touchedFiguresOf} from '../heap/touched-figures.js'
import type {TcmallocHeap} from './heap.js'
import {SPAN_HANDOVER} from './inside-allocator.js'
import {IN_USE, ON_NORMAL_FREELIST, ON_RETURNED_FREELIST} from './spans.js'

/** What the summary says of the allocator: gperftools, its version, its layout group and where its globals were found. */
export function describeAllocator(heap: TcmallocHeap): AllocatorDescription {
  const g = heap.globals
  return {
    kind: 'gperftools',
    version: g.version,
    versionHow: g.versionHow,
    layoutGroup: g.layout.group,
    pageSize: heap.pageSize,
    module: heap.module.loaded.module.path,
    moduleFile: heap.module.loaded.file?.path ?? null,
    globals: {
      pageHeap: {address: hex(g.pageHeap), how: g.how.pageHeap},
      centralCache: {address: hex(g.centralCache), how: g.how.centralCache},
      sizeMap: {address: hex(g.sizeMap), how: g.how.sizeMap},
      threadHeaps: {address: g.threadHeaps === null ? null : hex(g.threadHeaps), how: g.how.threadHeaps},
    },
    sizeClasses: g.sizes.count - 1,
  }
}

/** Spans and bytes by kind: small-object, large, sampled (a large span of its own), page-heap free, returned. */
export function spanKinds(heap: TcmallocHeap): Record<string, {spans: number; bytes: number}> {
  const {spans} = heap
  const kinds = {
    'small-object': {spans: 0, bytes: 0},
    large: {spans: 0, bytes: 0},
    sampled: {spans: 0, bytes: 0},
    'page-heap free': {spans: 0, bytes: 0},
    returned: {spans: 0, bytes: 0},
  }
  for (let s = 0; s < spans.count; s++) {
    const bytes = spans.pages[s]! * heap.pageSize
    const kind =
      spans.location[s] === ON_NORMAL_FREELIST
        ? 'page-heap free'
        : spans.location[s] === ON_RETURNED_FREELIST
          ? 'returned'
          : spans.sizeClass[s]! > 0
            ? 'small-object'
            : spans.sampled[s]
              ? 'sampled'
              : 'large'
    kinds[kind].spans++
    kinds[kind].bytes += bytes
  }
  return kinds
}

/** Live and free objects per size class of in-use small-object spans (classes in first-seen order). */
export function sizeClassUse(heap: TcmallocHeap): SizeClassUse[] {
  return sizeClassUseOf(heap.spans, heap.state, cl => heap.globals.sizes.size[cl]!)
}

/** In-use small-object spans of a class, in address order. */
export function spansOfClass(heap: TcmallocHeap, sizeClass: number): number[] {
  const {spans} = heap
  const out: number[] = []
  for (let s = 0; s < spans.count; s++) if (spans.location[s] === IN_USE && spans.sizeClass[s] === sizeClass) out.push(s)
  return out
}

/** The MallocExtension figures that damage (bytes behind bad links, interior entries) or a structure in flight make bounds. */
export function touchedFigures(heap: TcmallocHeap, activity: AllocatorActivity, bytesBehind: number): TouchedFigure[] {
  return touchedFiguresOf(heap.damage, activity, bytesBehind, {
    allocator: 'TCMalloc',
    live: 'generic.current_allocated_bytes',
    rows: [
      {property: 'tcmalloc.thread_cache_free_bytes', damagedStructure: /^thread cache/, guard: 'threads'},
      {
        property: 'tcmalloc.central_cache_free_bytes',
        damagedStructure: /^span/,
        guard: 'class-lock',
        alsoInFlight: activity.threads.some(t => t.frames.some(f => SPAN_HANDOVER.test(f.name)))
          ? 'a thread was handing a span between the page heap and a central list: its objects are free while counter_ does not count them'
          : null,
      },
      {property: 'tcmalloc.transfer_cache_free_bytes', damagedStructure: /^transfer/, guard: 'class-lock'},
      {property: 'tcmalloc.pageheap_free_bytes', damagedStructure: /^page heap/, guard: 'page-lock'},
      {property: 'tcmalloc.pageheap_unmapped_bytes', damagedStructure: /^page heap/, guard: 'page-lock'},
    ],
    lockWhy: {'class-lock': 'a central free list lock was held', 'page-lock': 'the page heap lock was held'},
  })
}
