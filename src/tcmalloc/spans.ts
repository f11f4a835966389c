import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {GrowableF64} from '../util/growable.js'
import {SPAN, type Layout} from './layout.js'
import {walkPageMap} from './pagemap.js'
import type {SizeClasses} from './size-map.js'
import type {Warnings} from './warnings.js'
import {lastAtOrBelow} from '../util/search.js'

export const IN_USE = 0
export const ON_NORMAL_FREELIST = 1
export const ON_RETURNED_FREELIST = 2

/**
 * Every span of the page heap, in address order, as parallel typed arrays: a span is an index.
 * Each span owns a run of object slots [firstObject, firstObject + objectCount) in the heap's
 * state array: one slot per object of a small-object span, one for a large or free span.
 */
export interface SpanTable {
  count: number
  /** Address of the Span record (TCMalloc metadata). */
  record: Float64Array
  /** First byte of the span's memory. */
  start: Float64Array
  pages: Float64Array
  sizeClass: Uint8Array
  location: Uint8Array
  refcount: Uint16Array
  sampled: Uint8Array
  /** Head of the span's own free-object list (small-object spans). */
  freeHead: Float64Array
  /** Bytes of one object: the class size, or the whole span. */
  objectSize: Float64Array
  firstObject: Float64Array
  objectCount: Float64Array
  totalObjects: number
}

/** Walks the page map and reads each span once, accepting a page's entry only when span->start is that page. */
export function readSpans(
  memory: AddressSpace,
  pageHeap: number,
  layout: Layout,
  sizes: SizeClasses,
  warnings: Warnings,
  progress?: (pages: number) => void,
): SpanTable {
  const record = new GrowableF64()
  const start = new GrowableF64()
  const pages = new GrowableF64()
  const bits = new GrowableF64()
  const head = new GrowableF64()
  const maxPage = 2 ** (48 - layout.pageShift)
  const buf = Buffer.alloc(SPAN.size)
  let visited = 0
  walkPageMap(memory, pageHeap, layout, warnings, (page, span) => {
    if ((++visited & 0xffff) === 0) progress?.(page)
    if (!memory.readInto(span, SPAN.size, buf)) {
      warnings.add('span', `page map entry for page ${hex(page * layout.pageSize)} points to ${hex(span)}, not in the core`, span)
      return page + 1
    }
    const spanStart = buf.readUInt32LE(SPAN.start) + buf.readUInt32LE(SPAN.start + 4) * 0x1_0000_0000
    // Interior entries of free and large spans may be stale pointers to recycled Span records.
    if (spanStart !== page) return page + 1
    const length = buf.readUInt32LE(SPAN.length) + buf.readUInt32LE(SPAN.length + 4) * 0x1_0000_0000
    if (length < 1 || page + length > maxPage) {
      warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)} has impossible length ${length}`, span)
      return page + 1
    }
    const word = buf.readUInt32LE(SPAN.bits)
    const cl = (word >>> 16) & 0xff
    const location = (word >>> 24) & 3
    if (location > ON_RETURNED_FREELIST) {
      warnings.add('span', `span ${hex(span)} has invalid location ${location}`, span)
      return page + 1
    }
    if (cl >= sizes.count) {
      warnings.add('span', `span ${hex(span)} has size class ${cl}, beyond the ${sizes.count} classes`, span)
      return page + 1
    }
    if (location === IN_USE && cl > 0 && length !== sizes.pages[cl]) {
      warnings.add('span', `span ${hex(span)} of class ${cl} has ${length} pages, the class has ${sizes.pages[cl]}`, span)
    }
    record.push(span)
    start.push(page * layout.pageSize)
    pages.push(length)
    bits.push(word)
    head.push(buf.readUInt32LE(SPAN.objects) + buf.readUInt32LE(SPAN.objects + 4) * 0x1_0000_0000)
    return page + length
  })
  const count = record.length
  const table: SpanTable = {
    count,
    record: record.toArray(),
    start: start.toArray(),
    pages: pages.toArray(),
    sizeClass: new Uint8Array(count),
    location: new Uint8Array(count),
    refcount: new Uint16Array(count),
    sampled: new Uint8Array(count),
    freeHead: head.toArray(),
    objectSize: new Float64Array(count),
    firstObject: new Float64Array(count),
    objectCount: new Float64Array(count),
    totalObjects: 0,
  }
  const words = bits.toArray()
  let objects = 0
  for (let i = 0; i < count; i++) {
    const w = words[i]!
    const cl = (w >>> 16) & 0xff
    const location = (w >>> 24) & 3
    table.sizeClass[i] = cl
    table.location[i] = location
    table.refcount[i] = w & 0xffff
    table.sampled[i] = (w >>> 26) & 1
    const bytes = table.pages[i]! * layout.pageSize
    const small = location === IN_USE && cl > 0
    table.objectSize[i] = small ? sizes.size[cl]! : bytes
    table.objectCount[i] = small ? Math.floor(bytes / sizes.size[cl]!) : 1
    table.firstObject[i] = objects
    objects += table.objectCount[i]!
  }
  table.totalObjects = objects
  return table
}

/** Index of the span whose memory contains addr, or -1. */
export function spanIndexAt(spans: Pick<SpanTable, 'start' | 'pages'>, pageSize: number, addr: number): number {
  const s = lastAtOrBelow(spans.start, addr)
  return s >= 0 && addr < spans.start[s]! + spans.pages[s]! * pageSize ? s : -1
}
