import {hex} from '../errors.js'
import {lastAtOrBelow} from '../util/search.js'
import type {AddressSpace} from '../core/address-space.js'
import type {SlotTable} from '../heap/slot-table.js'
import type {SpanColumns} from '../heap/heap-model.js'
import type {Warnings} from '../heap/warnings.js'
import {GrowableF64} from '../util/growable.js'
import {u64le} from '../util/u64le.js'
import type {GoogleLayout} from './layout.js'
import type {PageEntry} from './page-map.js'
import type {FreeRange} from './back-end.js'

/** A span in google/tcmalloc's page map: only spans in use have a record the map still names. */
export interface GoogleSpanTable extends SlotTable, SpanColumns {
  /** tcmalloc's own size class of each span (0: large or sampled), beside the compact one the index keeps. */
  tcmallocClass: Uint16Array
  /** Span::allocated_: objects the span has handed out (small spans). */
  allocated: Uint16Array
  /** The SampledAllocation record of a sampled span, else 0. */
  sampledRecord: Float64Array
}

/** The size classes a build has: bytes and pages per class, from SizeMap. */
export interface ClassSizes {
  size: Float64Array
  pages: Float64Array
}

/** A Span record's fields, from the 64-byte record and its bitfield word. */
export interface SpanRecord {
  firstPage: number
  pages: number
  isLarge: boolean
  sampled: boolean
  allocated: number
  sampledAllocation: number
}

/**
 * A span record as the family lays it out. From 2025 first_page_ is the low 48 − kPageShift bits
 * of a word and the flags follow it; the page count is small_num_pages_ (6 bits) unless the span
 * is large or sampled, when LargeOrSampledState.num_pages in the union holds it. Before, both were
 * whole 64-bit fields and the union held the SampledAllocation pointer.
 */
export function readSpanRecord(memory: AddressSpace, record: number, layout: GoogleLayout, pageShift: number): SpanRecord | undefined {
  const L = layout.span
  const bytes = memory.readBytes(record, L.size)
  if (!bytes) return undefined
  let firstPage: number
  let pages: number
  let isLarge = false
  let sampled: boolean
  let sampledAt: number
  if (L.record.kind === 'bitfields') {
    const R = L.record
    const word = bytes.readBigUInt64LE(R.bitsWord)
    const width = BigInt(48 - pageShift)
    const bit = (after: number) => Number((word >> (width + BigInt(after))) & 1n) === 1
    firstPage = Number(word & ((1n << width) - 1n))
    isLarge = bit(R.isLargeAfter)
    sampled = bit(R.sampledAfter)
    const small = R.smallNumPagesAfter === null ? bytes[L.union]! % 64 : Number((word >> (width + BigInt(R.smallNumPagesAfter))) & 63n)
    pages = isLarge || sampled ? u64le(bytes, L.union) : small
    sampledAt = L.union + 8
  } else {
    const R = L.record
    firstPage = u64le(bytes, R.firstPage)
    pages = u64le(bytes, R.numPages)
    sampled = Math.floor(bytes[R.flagsByte]! / 2 ** R.sampledBit) % 2 === 1
    sampledAt = L.union
  }
  return {
    firstPage,
    pages,
    isLarge,
    sampled,
    allocated: bytes.readUInt16LE(L.allocated),
    sampledAllocation: sampled ? u64le(bytes, sampledAt) : 0,
  }
}

/**
 * The spans in use, in address order: a page-map entry starts one when the record it names says
 * it starts at that page (HugePageAwareAllocator::Delete points a freed span's first page at
 * Static::kInvalidSpan, a freed record that was reused names other pages, and one still on
 * span_allocator_'s free list is left out by name; before 2025 a freed span's page kept its
 * pointer, so that list is what tells them). A small span's class must exist and its pages be the class's; a span must not run into
 * the next. A record that fails is reported with its address and left out.
 */
export function readSpans(
  memory: AddressSpace,
  entries: PageEntry[],
  layout: GoogleLayout,
  pageShift: number,
  classes: ClassSizes,
  compact: (tcmallocClass: number) => number,
  warnings: Warnings,
  free: FreeRange[] = [],
  /** Records that are no span in use: freed (span_allocator_'s free list), or static (Static::kInvalidSpan, in the module's data). */
  notSpan: (record: number) => boolean = () => false,
): GoogleSpanTable {
  const pageSize = 2 ** pageShift
  const record = new GrowableF64()
  const start = new GrowableF64()
  const pages = new GrowableF64()
  const objectSize = new GrowableF64()
  const objectCount = new GrowableF64()
  const firstObject = new GrowableF64()
  const sampledRecord = new GrowableF64()
  const sizeClass: number[] = []
  const tcmallocClass: number[] = []
  const allocated: number[] = []
  const location: number[] = []
  let objects = 0
  let end = 0
  const push = (rec: number, first: number, n: number, size: number, count: number, sampled: number, cls: number, used: number, where: number) => {
    record.push(rec)
    start.push(first)
    pages.push(n)
    objectSize.push(size)
    objectCount.push(count)
    firstObject.push(objects)
    sampledRecord.push(sampled)
    sizeClass.push(cls === 0 ? 0 : compact(cls))
    tcmallocClass.push(cls)
    allocated.push(used)
    location.push(where)
    objects += count
    end = first + n * pageSize
  }
  // Free runs of the back end (back-end.ts) go in between, one slot each, in address order.
  let f = 0
  const freeBefore = (limit: number) => {
    for (; f < free.length && free[f]!.start < limit; f++) {
      const r = free[f]!
      if (r.start < end || r.start + r.bytes > limit || r.bytes % pageSize !== 0) {
        warnings.add('back-end', `free pages ${hex(r.start)}-${hex(r.start + r.bytes)} overlap a span in use: left out`, r.start)
        continue
      }
      push(0, r.start, r.bytes / pageSize, r.bytes, 1, 0, 0, 0, r.returned ? 2 : 1)
    }
  }
  // Records the map names that start no span: a freed span's other pages keep naming its record
  // (freed, or reused and started elsewhere); one that is neither is damage, and its pages are lost.
  const named = new Map<number, number>()
  // A span's pages follow its first one in the map, each naming its record: once a record has
  // started a span, the pages after it are not read again. (Only then: a stale entry just before
  // a reused record's first page names that record too.)
  let started = 0
  for (const e of entries) {
    if (e.record === started || notSpan(e.record)) continue
    const r = readSpanRecord(memory, e.record, layout, pageShift)
    if (!r || r.firstPage !== e.page) {
      if (!named.has(e.record)) named.set(e.record, e.page)
      continue
    }
    started = e.record
    const first = e.page * pageSize
    freeBefore(first)
    if (first < end) {
      warnings.add('span', `span record ${hex(e.record)} starts at ${hex(first)}, inside the span before it (which ends at ${hex(end)}): left out`, e.record)
      continue
    }
    let size: number
    let count: number
    const cls = r.isLarge || r.sampled ? 0 : e.sizeClass
    if (cls === 0) {
      if (r.pages < 1 || r.pages > 2 ** (48 - pageShift)) {
        warnings.add('span', `span record ${hex(e.record)} at ${hex(first)} claims ${r.pages} pages: left out`, e.record)
        continue
      }
      size = r.pages * pageSize
      count = 1
    } else {
      const classSize = classes.size[cls]
      if (!classSize || classes.pages[cls] !== r.pages) {
        warnings.add('span', `span record ${hex(e.record)} at ${hex(first)}: size class ${cls} (${classSize ?? 'none'} bytes, ${classes.pages[cls] ?? '?'} pages) does not fit its ${r.pages} pages: left out`, e.record)
        continue
      }
      size = classSize
      count = Math.floor((r.pages * pageSize) / classSize)
    }
    push(e.record, first, r.pages, size, count, r.sampledAllocation, cls, r.allocated, 0)
  }
  freeBefore(Infinity)
  const records = record.toArray().slice().sort()
  for (const [rec, page] of named) {
    if (records[lastAtOrBelow(records, rec)] === rec) continue
    const r = readSpanRecord(memory, rec, layout, pageShift)
    const says = r ? `says it starts at page ${hex(r.firstPage * pageSize)}` : 'is not in the core'
    warnings.addDamage('span', `span record ${hex(rec)}, named by the page map at ${hex(page * pageSize)}, ${says}, and starts no span in use, nor is it on span_allocator_'s free list: its pages are left out`, rec)
  }
  const count = start.length
  return {
    count,
    totalObjects: objects,
    record: record.toArray(),
    start: start.toArray(),
    pages: pages.toArray(),
    objectSize: objectSize.toArray(),
    firstObject: firstObject.toArray(),
    objectCount: objectCount.toArray(),
    sizeClass: Uint8Array.from(sizeClass),
    tcmallocClass: Uint16Array.from(tcmallocClass),
    location: Uint8Array.from(location),
    refcount: Uint16Array.from(allocated, (a, s) => (location[s] !== 0 ? 0 : tcmallocClass[s] === 0 ? 1 : a)),
    allocated: Uint16Array.from(allocated),
    sampled: Uint8Array.from(sampledRecord.toArray(), v => (v !== 0 ? 1 : 0)),
    sampledRecord: sampledRecord.toArray(),
  }
}

/** Records on span_allocator_'s free list (chained through their first word), bounded. */
export function freedSpanRecords(memory: AddressSpace, spanAllocator: number | null, layout: GoogleLayout, warnings: Warnings): Set<number> {
  const out = new Set<number>()
  if (spanAllocator === null) return out
  let p = memory.readU64(spanAllocator + layout.spanAllocatorFreeList) ?? 0
  while (p !== 0 && !out.has(p) && out.size < 1 << 24) {
    out.add(p)
    const next = memory.readU64(p)
    if (next === undefined) {
      warnings.add('span', `freed span record ${hex(p)} on span_allocator_'s list is not in the core: the rest of the list is not read`, p)
      break
    }
    p = next
  }
  return out
}
