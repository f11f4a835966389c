import {layoutData, type RawLayout, type RawStruct} from './layout-data.js'

/** Everything toma reads from TCMalloc's structures, for one layout group and page size. */
export interface Layout {
  group: string
  pageShift: number
  pageSize: number
  maxPages: number
  /** A–D: Static::pageheap_ is a pointer to the PageHeap; E–J: it is the object. */
  pageHeapIsPointer: boolean
  pageHeap: {
    size: number
    pagemap: number
    free: number
    /** free_[i] holds spans of i + freeIndexBase pages (≤ 2.6.3: free_[n]; ≥ 2.6.90: free_[n-1]). */
    freeIndexBase: number
    freeCount: number
    /** ≤ 2.6.3: one more SpanList for spans of ≥ kMaxPages pages. */
    large: number | null
    /** ≥ 2.6.90: std::set of large normal / returned spans. */
    largeNormal: number | null
    largeReturned: number | null
    stats: number
    lock: number | null
  }
  /** PageHeap::Stats; committed_bytes from 2.1.90 (C) on. */
  stats: {systemBytes: number; freeBytes: number; unmappedBytes: number; committedBytes: number | null}
  pageMap:
    | {kind: 2; rootBits: number; leafBits: number; allocator: number}
    | {kind: 3; interiorBits: number; leafBits: number; allocator: number}
  central: {
    stride: number
    count: number
    lock: number
    sizeClass: number
    empty: number
    nonempty: number
    numSpans: number
    counter: number
    slots: number
    usedSlots: number
  }
  sizeMap: {
    size: number
    classArray: number
    classToSize: number
    classToSizeWidth: 4 | 8
    classToPages: number
    numObjectsToMove: number
    /** Runtime class count field (E–J); null when the count is the array length (A–D). */
    numSizeClasses: number | null
    arrayLength: number
  }
  threadCache: {
    list: number
    freeListSize: number
    next: number
    prev: number
    /** Bytes held: size_ (A–D 8 bytes, F–J 4 bytes), or max_size_ − size_left_ in E. */
    size: number
    sizeWidth: 4 | 8
    sizeIsLeft: boolean
    maxSize: number
    maxSizeWidth: 4 | 8
    tid: number | null
    objectSize: number
  }
  freeList: {list: number; length: number}
}

export const SPAN = {start: 0, length: 8, next: 16, prev: 24, objects: 32, bits: 40, size: 48} as const
export const SPAN_LIST_SIZE = 96 // {Span normal; Span returned}

export const GROUPS = Object.keys(layoutData.groups)

export function groupOfVersion(version: string): string | undefined {
  return layoutData.versionToGroup[version]
}

export function versionsOfGroup(group: string): string[] {
  return layoutData.groups[group]?.versions ?? []
}

export function pageShiftsOf(group: string): number[] {
  return Object.keys(layoutData.groups[group]?.layouts ?? {}).map(Number)
}

function field(s: RawStruct | undefined, name: string): number {
  const f = s?.fields[name]
  if (!f) throw new Error(`layout table lacks ${name}`)
  return f[0]
}
function optField(s: RawStruct | undefined, name: string): number | null {
  return s?.fields[name]?.[0] ?? null
}
function width(s: RawStruct | undefined, name: string): number {
  return s?.fields[name]?.[1] ?? 0
}

const cache = new Map<string, Layout>()

export function layoutFor(group: string, pageShift: number): Layout | undefined {
  const key = `${group}/${pageShift}`
  if (cache.has(key)) return cache.get(key)
  const raw: RawLayout | undefined = layoutData.groups[group]?.layouts[String(pageShift)]
  if (!raw) return undefined
  const ph = raw.structs['PageHeap']
  const st = raw.structs['PageHeap::Stats']
  const cf = raw.structs['CentralFreeList']
  const sm = raw.structs['SizeMap']
  const tc = raw.structs['ThreadCache']
  const fl = raw.structs['ThreadCache::FreeList']
  const c = raw.constants
  const maxPages = c['kMaxPages']!
  const sizeWidth = width(sm, 'class_to_size_') === 0 ? 8 : (raw.structs['SizeMap']!.fields['num_size_classes'] ? 4 : 8)
  const toSizeBytes = width(sm, 'class_to_size_')
  const arrayLength = toSizeBytes / sizeWidth
  const largeNormal = optField(ph, 'large_normal_')
  const pm = raw.pagemap
  const pageMap: Layout['pageMap'] =
    pm['type'] === 'TCMalloc_PageMap2'
      ? {kind: 2, rootBits: Number(pm['ROOT_BITS']), leafBits: Number(pm['LEAF_BITS']), allocator: Number(pm['allocator_off'])}
      : {kind: 3, interiorBits: Number(pm['INTERIOR_BITS']), leafBits: Number(pm['LEAF_BITS']), allocator: Number(pm['allocator_off'])}
  const tcSizeLeft = optField(tc, 'size_left_')
  const layout: Layout = {
    group,
    pageShift,
    pageSize: 2 ** pageShift,
    maxPages,
    pageHeapIsPointer: pageMap.kind === 3,
    pageHeap: {
      size: ph!.size,
      pagemap: field(ph, 'pagemap_'),
      free: field(ph, 'free_'),
      freeIndexBase: largeNormal === null ? 0 : 1,
      freeCount: maxPages,
      large: optField(ph, 'large_'),
      largeNormal,
      largeReturned: optField(ph, 'large_returned_'),
      stats: field(ph, 'stats_'),
      lock: optField(ph, 'lock_'),
    },
    stats: {
      systemBytes: field(st, 'system_bytes'),
      freeBytes: field(st, 'free_bytes'),
      unmappedBytes: field(st, 'unmapped_bytes'),
      committedBytes: optField(st, 'committed_bytes'),
    },
    pageMap,
    central: {
      stride: 1216,
      // The array's length: a bound; how many classes are in use comes from the size map.
      count: arrayLength,
      lock: field(cf, 'lock_'),
      sizeClass: field(cf, 'size_class_'),
      empty: field(cf, 'empty_'),
      nonempty: field(cf, 'nonempty_'),
      numSpans: field(cf, 'num_spans_'),
      counter: field(cf, 'counter_'),
      slots: field(cf, 'tc_slots_'),
      usedSlots: field(cf, 'used_slots_'),
    },
    sizeMap: {
      size: sm!.size,
      classArray: field(sm, 'class_array_'),
      classToSize: field(sm, 'class_to_size_'),
      classToSizeWidth: sizeWidth as 4 | 8,
      classToPages: field(sm, 'class_to_pages_'),
      numObjectsToMove: field(sm, 'num_objects_to_move_'),
      numSizeClasses: optField(sm, 'num_size_classes'),
      arrayLength,
    },
    threadCache: {
      list: field(tc, 'list_'),
      freeListSize: fl!.size,
      next: field(tc, 'next_'),
      prev: field(tc, 'prev_'),
      size: tcSizeLeft ?? field(tc, 'size_'),
      sizeWidth: (tcSizeLeft !== null ? width(tc, 'size_left_') : width(tc, 'size_')) as 4 | 8,
      sizeIsLeft: tcSizeLeft !== null,
      maxSize: field(tc, 'max_size_'),
      maxSizeWidth: width(tc, 'max_size_') as 4 | 8,
      tid: optField(tc, 'tid_'),
      objectSize: tc!.size,
    },
    freeList: {list: field(fl, 'list_'), length: field(fl, 'length_')},
  }
  cache.set(key, layout)
  return layout
}
