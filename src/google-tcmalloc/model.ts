import {hex} from '../errors.js'
import type {AllocatorDescription, HeapModel, ModelOptions, SizeClassUse} from '../heap/heap-model.js'
import {mergeIntervals, type Interval} from '../heap/interval.js'
import {sizeClassUseOf} from '../heap/size-class-use.js'
import type {Program} from '../program/program.js'
import type {RequestFit} from '../heap/request-fit.js'
import {googleActivity, googleTouchedFigures} from './activity.js'
import {analyzeGoogleHeap, familyName, identifyGoogleTcmalloc, locateGoogleTcmalloc, type GoogleHeap} from './heap.js'
import {classBytesOf} from './layout.js'
import {pageMapNodeBytes} from './page-map.js'
import {metadataTagSegments} from './metadata-tag.js'

/** Classes of tcmalloc itself: its singletons are no leak. */
const ALLOCATOR_CLASS = /^(tcmalloc::.*|MallocExtension.*)$/

/**
 * Google's TCMalloc (github google/tcmalloc: per-CPU caches, the huge-page-aware back end) as a
 * heap model, beside gperftools' (src/allocators.ts lists both). `present` says whether a module
 * defines its Static::pagemap_; `analyze` walks its page map and caches (heap.ts).
 */
export const googleTcmallocModel = {
  name: 'google/tcmalloc',
  present(program: Program): 'symbols' | 'structure' | null {
    const where = locateGoogleTcmalloc(program)
    return where === null ? null : where.pageMap === null ? 'symbols' : 'structure'
  },
  identify(program: Program): string {
    return identifyGoogleTcmalloc(program)
  },
  analyze(program: Program, options: ModelOptions = {}): HeapModel {
    return asHeapModel(analyzeGoogleHeap(program, options))
  },
}

function asHeapModel(heap: GoogleHeap): HeapModel {
  const {globals: _globals, layout: _layout, shift: _shift, classes, classOfCompact, frontCaches: _front, pageMapWalk: _walk, sampledProxy: _proxy, ...modelled} = heap
  const sizeClassSizes = Float64Array.from(classOfCompact, c => (c === 0 ? 0 : classes.size[c]!))
  return {
    ...modelled,
    name: googleTcmallocModel.name,
    sizeClassSizes,
    internalClasses: ALLOCATOR_CLASS,
    ownSlots: Uint32Array.from(heap.sampledProxy.filter(slot => slot >= 0)),
    ownLibrary: /^libtcmalloc/.test(heap.module.loaded.module.path.split('/').pop() ?? ''),
    requestFit: () => requestFit(classes.size, heap.pageSize),
    metadata: program => metadata(program, heap),
    staticState: () => [],
    activity: program => googleActivity(program, heap),
    touchedFigures: (activity, bytesBehind) => googleTouchedFigures(heap, activity, bytesBehind),
    spansOfClass: sizeClass => {
      const out: number[] = []
      for (let s = 0; s < heap.spans.count; s++) if (heap.spans.sizeClass[s] === sizeClass && heap.spans.location[s] === 0) out.push(s)
      return out
    },
    describe: () => describe(heap),
    spanKinds: () => spanKinds(heap),
    sizeClassUse: () => sizeClassUse(heap),
  }
}

/**
 * The request sizes tcmalloc's classes give: a request takes the smallest class that holds it
 * (classes of equal size in other partitions change nothing).
 */
function requestFit(classSize: Float64Array, pageSize: number): RequestFit {
  const sizes = Float64Array.from(new Set(Array.from(classSize).filter(s => s > 0))).sort()
  return {classSizes: Float64Array.from([0, ...sizes]), pageSize}
}

/**
 * tcmalloc's memory outside its module's data, which the roots must not scan:
 * - span records, the sampled allocations' records, page-map nodes and leaves;
 * - the free pages of its heap. Unlike gperftools' page heap, the huge-page-aware back end keeps
 *   no span for free pages, and they hold stale pointers to freed objects (and gigabytes of
 *   zeros in a reservation gcore writes out). tcmalloc maps its heap in regions of its own, so
 *   each part of a mapping that holds a span in use and lies under a page-map leaf is its heap;
 * - the rest of its metadata arena (metadata-tag.ts): dead sample records, the peak-heap
 *   tracker's copies of old samples and freed span records keep the addresses of objects long
 *   freed, or of live ones, and made those objects reachable from nothing the program holds.
 */
function metadata(program: Program, heap: GoogleHeap): {intervals: Interval[]; how: string[]} {
  const list: Interval[] = []
  const {spans, layout, pageShift, shift} = heap
  for (let s = 0; s < spans.count; s++) {
    list.push({start: spans.record[s]!, end: spans.record[s]! + layout.span.size})
    if (spans.sampledRecord[s] && layout.sampledAllocation) list.push({start: spans.sampledRecord[s]!, end: spans.sampledRecord[s]! + layout.sampledAllocation.size})
  }
  const node = pageMapNodeBytes(layout, pageShift, classBytesOf(shift))
  for (const leaf of heap.pageMapWalk.leaves) list.push({start: leaf, end: leaf + node.leaf})
  for (const n of heap.pageMapWalk.nodes) list.push({start: n, end: n + node.node})
  const segments = program.core.memory.segments
  const leafBytes = node.leafCovers * heap.pageSize
  let heapBytes = 0
  let seg = 0
  for (let s = 0; s < spans.count; s++) {
    const start = spans.start[s]!
    while (seg < segments.length && segments[seg]!.end <= start) seg++
    const g = segments[seg]
    if (!g || g.start > start) continue
    const leafStart = Math.floor(start / leafBytes) * leafBytes
    const piece = {start: Math.max(g.start, leafStart), end: Math.min(g.end, leafStart + leafBytes)}
    const last = list[list.length - 1]
    if (last && last.start === piece.start && last.end === piece.end) continue
    list.push(piece)
    heapBytes += piece.end - piece.start
  }
  const arena = metadataTagSegments(program)
  list.push(...arena.intervals)
  return {
    intervals: mergeIntervals(list),
    how: [
      `span records: ${spans.count}, from the page map`,
      arena.how,
      `page-map leaves: ${heap.pageMapWalk.leaves.length}, nodes: ${heap.pageMapWalk.nodes.length}`,
      `heap regions: the parts of mappings holding spans under page-map leaves (about ${Math.round(heapBytes / 2 ** 20)} MiB, free pages included)`,
    ],
  }
}

function describe(heap: GoogleHeap): AllocatorDescription {
  const g = heap.globals
  const globals: AllocatorDescription['globals'] = {}
  for (const [name, at] of Object.entries(g.at)) globals[name] = {address: at === null ? null : hex(at), how: g.how[name as keyof typeof g.how]}
  return {
    kind: 'google/tcmalloc',
    version: heap.layout.family,
    versionHow: heap.how,
    layoutGroup: familyName(heap.layout),
    pageSize: heap.pageSize,
    module: heap.module.loaded.module.path,
    moduleFile: heap.module.loaded.file?.path ?? null,
    globals,
    sizeClasses: heap.classOfCompact.length - 1,
  }
}

function spanKinds(heap: GoogleHeap): Record<string, {spans: number; bytes: number}> {
  const kinds = {'small-object': {spans: 0, bytes: 0}, large: {spans: 0, bytes: 0}, sampled: {spans: 0, bytes: 0}, 'page-heap free': {spans: 0, bytes: 0}, returned: {spans: 0, bytes: 0}}
  const {spans} = heap
  for (let s = 0; s < spans.count; s++) {
    const kind = spans.location[s] === 1 ? 'page-heap free' : spans.location[s] === 2 ? 'returned' : spans.sizeClass[s]! > 0 ? 'small-object' : spans.sampled[s] ? 'sampled' : 'large'
    kinds[kind].spans++
    kinds[kind].bytes += spans.pages[s]! * heap.pageSize
  }
  return kinds
}

function sizeClassUse(heap: GoogleHeap): SizeClassUse[] {
  return sizeClassUseOf(heap.spans, heap.state, cl => heap.classes.size[heap.classOfCompact[cl]!]!)
}
