import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {CENTRAL_CACHE, LIVE} from '../heap/states.js'
import type {Warnings} from '../heap/warnings.js'
import type {FreeMarker} from './free-marker.js'
import type {GoogleLayout} from './layout.js'

/** ObjIdx's end of list (Span::kListEnd, uint16 −1). */
const LIST_END = 0xffff
/** Objects are 8-byte aligned: a list index is the offset in the span's page divided by 8 (kAlignmentShift). */
const ALIGNMENT_SHIFT = 3

/**
 * The free objects each small span keeps itself (span.h, "Freelist organization"): those are
 * what CentralFreeList holds, counted in the central-cache state. Spans of objects of at least
 * kPageSize / kBitmapSize bytes keep a bitmap (bit set = free); smaller objects, in spans of one
 * page, keep an embedded cache of up to kCacheSize indices and a list whose hosts are free
 * objects holding further indices: host[0] links the next host, host[1..embed_count] are free.
 * Span::allocated_ says how many objects the span has handed out: what the walk finds must be the
 * rest, or the span is reported. A class of one object per span keeps no free list at all
 * (CentralFreeList hands whole spans out and takes them back): its object is live or cached.
 */
export function markSpanFreeObjects(memory: AddressSpace, marker: FreeMarker, layout: GoogleLayout, pageShift: number): void {
  const {spans, state} = marker
  const L = layout.span
  const pageSize = 2 ** pageShift
  const bitmapMinSize = Math.floor(pageSize / L.bitmapBits)
  for (let s = 0; s < spans.count; s++) {
    const cls = spans.tcmallocClass[s]!
    const count = spans.objectCount[s]!
    if (cls === 0 || count === 1) continue
    const size = spans.objectSize[s]!
    const first = spans.firstObject[s]!
    const start = spans.start[s]!
    const record = spans.record[s]!
    let found = 0
    const free = (idx: number, where: string): boolean => {
      if (idx >= count) {
        marker.warnings.addDamage('span-free-list', `span ${hex(record)} (${hex(start)}, class ${cls}): ${where} names object ${idx} of ${count}: the rest of its list is not read`, record)
        return false
      }
      const slot = first + idx
      if (state[slot] !== LIVE) {
        marker.warnings.addDamage('span-free-list', `span ${hex(record)} (${hex(start)}, class ${cls}): ${where} names object ${idx} twice: the rest of its list is not read`, record)
        return false
      }
      state[slot] = CENTRAL_CACHE
      marker.bytes[CENTRAL_CACHE]! += size
      marker.objects[CENTRAL_CACHE]!++
      found++
      return true
    }
    // The embedded cache may run past the record's declared size (spans allocated for a larger cache).
    const bytes = memory.readBytes(record, Math.max(L.size, L.union + 2 * L.cacheEntries))
    if (!bytes) continue
    if (size >= bitmapMinSize) {
      for (let w = 0; w * 64 < L.bitmapBits; w++) {
        const lo = bytes.readUInt32LE(L.union + w * 8)
        const hi = bytes.readUInt32LE(L.union + w * 8 + 4)
        for (let b = 0; b < 64; b++) {
          if ((b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1) === 0) continue
          if (!free(w * 64 + b, 'its bitmap')) break
        }
      }
    } else {
      const toIdx = (idx: number) => start + idx * 2 ** ALIGNMENT_SHIFT
      const fromAddr = (addr: number) => (addr - start) / 2 ** ALIGNMENT_SHIFT / (size / 2 ** ALIGNMENT_SHIFT)
      const cached = bytes[L.cacheSize]!
      for (let i = 0; i < Math.min(cached, L.cacheEntries); i++) {
        const k = fromAddr(toIdx(bytes.readUInt16LE(L.union + i * 2)))
        if (!Number.isInteger(k) || !free(k, 'its cache')) break
      }
      let host = bytes.readUInt16LE(L.freelist)
      let embed = bytes.readUInt16LE(L.embedCount)
      const perHost = size / 2 - 1
      for (let hops = 0; host !== LIST_END && hops <= count; hops++) {
        const at = toIdx(host)
        const k = fromAddr(at)
        const words = memory.readBytes(at, Math.min(size, (embed + 1) * 2))
        if (!Number.isInteger(k) || !words || embed > perHost) {
          marker.warnings.addDamage('span-free-list', `span ${hex(record)} (${hex(start)}, class ${cls}): free-list host ${hex(at)} is no object of the span: the rest of its list is not read`, record, at)
          break
        }
        let ok = true
        for (let j = 1; j <= embed && ok; j++) {
          const e = fromAddr(toIdx(words.readUInt16LE(j * 2)))
          ok = Number.isInteger(e) && free(e, `the list hosted by ${hex(at)}`)
        }
        if (!ok || !free(k, 'its list')) break
        host = words.readUInt16LE(0)
        embed = perHost
      }
    }
    const expected = count - spans.allocated[s]!
    if (found !== expected) {
      marker.warnings.addDamage('span-free-list', `span ${hex(record)} (${hex(start)}, class ${cls}): ${found} free objects found, its allocated_ count (${spans.allocated[s]} of ${count}) says ${expected}`, record)
    }
  }
}
