import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {GrowableF64} from '../util/growable.js'
import {SPAN, type Layout} from './layout.js'
import {readPageMap} from './pagemap.js'
import type {SizeClasses} from './size-map.js'
import type {Warnings} from '../heap/warnings.js'
import type {SlotTable} from '../heap/slot-table.js'
import {u64le} from '../util/u64le.js'

/** A span's place in the page heap (Span::location): the index stores it per span (span.location). */
export const IN_USE = 0
export const ON_NORMAL_FREELIST = 1
export const ON_RETURNED_FREELIST = 2

/**
 * Every span of the page heap, in address order: the neutral slot table (start, pages, objectSize,
 * firstObject, objectCount, heap/slot-table.ts) with TCMalloc's own columns beside it.
 */
export interface SpanTable extends SlotTable {
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
}

/** A Span record's fields as read from the core (nothing checked yet). */
interface SpanRecord {
  start: number
  length: number
  word: number
  head: number
}

/**
 * Walks the page map and keeps each span whose record says it starts at its page. Nothing a record
 * claims is taken on its word alone: its location and class must exist, a small-object span must
 * have its class's pages, all mapped to it, and any span must end where the page map still maps
 * its last page to it, before the next span starts and within the heap's system bytes. A span that
 * fails is cut to what the page map shows, or dropped, with a warning naming its record.
 */
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
  const system = memory.readU64(pageHeap + layout.pageHeap.stats + layout.stats.systemBytes)
  const systemPages = system === undefined ? maxPage : Math.ceil(system / layout.pageSize)
  const map = readPageMap(memory, pageHeap, layout, warnings, progress)
  const buf = Buffer.alloc(SPAN.size)
  const read = (span: number): SpanRecord | undefined => {
    if (!memory.readInto(span, SPAN.size, buf)) return undefined
    const u64 = (off: number) => u64le(buf, off)
    return {start: u64(SPAN.start), length: u64(SPAN.length), word: buf.readUInt32LE(SPAN.bits), head: u64(SPAN.objects)}
  }
  /** Why a record cannot be a span starting at page, or '' when it can. */
  const invalid = (r: SpanRecord): string => {
    const cl = (r.word >>> 16) & 0xff
    const location = (r.word >>> 24) & 3
    if (r.length < 1) return `has impossible length ${r.length}`
    if (location > ON_RETURNED_FREELIST) return `has invalid location ${location}`
    if (cl >= sizes.count) return `has size class ${cl}, beyond the ${sizes.count} classes`
    return ''
  }
  const {page: entryPage, span: entrySpan, count: entries} = map
  let i = 0
  let lastRecord = -1
  let lastEnd = 0
  let beyondWarned = false
  while (i < entries) {
    const page = entryPage[i]!
    const span = entrySpan[i]!
    if (page < lastEnd) {
      i++
      continue
    }
    if (span === lastRecord) {
      // The page map still maps a page past the span's accepted end to it: its length was cut or is wrong.
      if (!beyondWarned) warnings.add('span', `page map maps page ${hex(page * layout.pageSize)}, past the end of span ${hex(span)}, to that span`, span)
      beyondWarned = true
      i++
      continue
    }
    const r = read(span)
    if (!r) {
      warnings.add('span', `page map entry for page ${hex(page * layout.pageSize)} points to ${hex(span)}, not in the core`, span)
      i++
      continue
    }
    // Interior entries of free and large spans may be stale pointers to recycled Span records.
    if (r.start !== page) {
      i++
      continue
    }
    const why = invalid(r)
    if (why) {
      warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)} ${why}`, span)
      i++
      continue
    }
    const cl = (r.word >>> 16) & 0xff
    const small = ((r.word >>> 24) & 3) === IN_USE && cl > 0
    const classPages = small ? sizes.pages[cl]! : 0
    // The process had memory mapped under every page of a span (returned pages stay mapped).
    const mappedPages = Math.floor(memory.mappedEnd(page * layout.pageSize) / layout.pageSize) - page
    if (mappedPages < 1) {
      warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)}: no memory of the process is mapped there; dropped`, span)
      i++
      continue
    }
    const claimedEnd = Math.min(page + r.length, maxPage)
    const scanEnd = Math.min(Math.max(claimedEnd, page + classPages), page + mappedPages)
    // What the page map shows from this page on: the last page still mapped to this record, the
    // pages mapped to it, and where the next span (a record that starts at its own page) begins.
    let lastSame = page
    let mapped = 1
    let next = entries
    let j = i + 1
    for (; j < entries && entryPage[j]! < scanEnd; j++) {
      const v = entrySpan[j]!
      if (v === span) {
        lastSame = entryPage[j]!
        mapped++
        continue
      }
      const other = read(v)
      if (other && other.start === entryPage[j] && !invalid(other)) {
        next = j
        break
      }
    }
    const nextPage = next < entries ? entryPage[next]! : Infinity
    let length = r.length
    let problem = ''
    if (r.length > mappedPages) problem = `claims ${r.length} pages, but only ${mappedPages} are mapped from its start`
    else if (r.length > systemPages) problem = `claims ${r.length} pages, more than the heap's ${systemPages} (system bytes)`
    else if (page + r.length > maxPage) problem = `claims ${r.length} pages, past the end of the address space`
    else if (nextPage < claimedEnd) problem = `claims ${r.length} pages, overlapping the span at ${hex(nextPage * layout.pageSize)}`
    else if (lastSame !== claimedEnd - 1) problem = `claims ${r.length} pages, but the page map does not map its last page to it`
    if (small) {
      // A small-object span must be exactly its class's pages, every one mapped to it.
      const whole = mapped >= classPages && lastSame === page + classPages - 1 && nextPage >= page + classPages
      if (r.length !== classPages) {
        problem = `of class ${cl} has ${r.length} pages, the class has ${classPages}`
      }
      if (!whole) {
        warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)} ${problem || `of class ${cl} has ${classPages} pages, but the page map maps only ${mapped} to it`}; dropped`, span)
        i = Math.max(i + 1, j)
        continue
      }
      if (problem) warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)} ${problem}; taken as its class's ${classPages} pages, which the page map maps to it`, span)
      length = classPages
    } else if (problem) {
      length = lastSame + 1 - page
      warnings.add('span', `span ${hex(span)} at ${hex(page * layout.pageSize)} ${problem}; cut to the ${length} page(s) the page map maps to it`, span)
    }
    record.push(span)
    start.push(page * layout.pageSize)
    pages.push(length)
    bits.push(r.word)
    head.push(r.head)
    lastRecord = span
    lastEnd = page + length
    beyondWarned = false
    i++
  }
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
