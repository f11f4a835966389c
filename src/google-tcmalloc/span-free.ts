import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {CENTRAL_CACHE, LIVE} from '../heap/states.js'
import type {DamageKind} from '../heap/damage.js'
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
  const bitmapMinSize = Math.floor(2 ** pageShift / L.bitmapBits)
  for (let s = 0; s < spans.count; s++) {
    const cls = spans.tcmallocClass[s]!
    const count = spans.objectCount[s]!
    if (cls === 0 || count === 1) continue
    const size = spans.objectSize[s]!
    const first = spans.firstObject[s]!
    const start = spans.start[s]!
    const record = spans.record[s]!
    const name = `span ${hex(record)} (${hex(start)}, class ${cls})`
    let broken = false
    const bad = (kind: DamageKind, slot: number, entry: number, message: string) => {
      broken = true
      marker.bad++
      marker.warnings.addDamage('span-free-list', `${name}: ${message}`, record, slot)
      marker.report(kind, cls, {where: `${name}'s free objects`, structure: record, slot, entry, behind: -1}, 0, `${name}: ${message}`)
    }
    let found = 0
    /** Marks object k free, read at `slot` (in the record, or in the free object `host`); false ends the list. */
    const free = (k: number, slot: number, host: number, where: string): boolean => {
      if (!Number.isInteger(k) || k < 0 || k >= count) {
        bad('overwritten-link', slot, host, `${where} names no object of the span (index ${k} of ${count}): the rest of its list is not read`)
        return false
      }
      if (state[first + k] !== LIVE) {
        bad('on-a-list-twice', slot, host, `${where} names object ${k} twice: the rest of its list is not read`)
        return false
      }
      state[first + k] = CENTRAL_CACHE
      marker.bytes[CENTRAL_CACHE]! += size
      marker.objects[CENTRAL_CACHE]!++
      found++
      return true
    }
    // An index is the object's offset in the span in units of kAlignment; its object is offset / size.
    const objectOf = (idx: number) => (idx * 2 ** ALIGNMENT_SHIFT) / size
    // The embedded cache may run past the record's declared size (spans allocated for a larger cache).
    const bytes = memory.readBytes(record, Math.max(L.size, L.cache + 2 * L.cacheEntries))
    if (!bytes) continue
    if (size >= bitmapMinSize) {
      for (let w = 0; w * 64 < L.bitmapBits; w++) {
        const lo = bytes.readUInt32LE(L.cache + w * 8)
        const hi = bytes.readUInt32LE(L.cache + w * 8 + 4)
        for (let b = 0; b < 64; b++) {
          if ((b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1) === 0) continue
          if (!free(w * 64 + b, record + L.cache + w * 8, 0, 'its bitmap')) break
        }
      }
    } else {
      const cached = bytes[L.cacheSize]! % 2 ** L.cacheSizeBits
      for (let i = 0; i < Math.min(cached, L.cacheEntries); i++) {
        const at = L.cache + i * 2
        if (!free(objectOf(bytes.readUInt16LE(at)), record + at, 0, 'its cache')) break
      }
      // Each host is a free object: word 0 links the next host, words 1..embed are free objects' indices.
      let host = bytes.readUInt16LE(L.freelist)
      let hostAt = record + L.freelist
      let embed = bytes.readUInt16LE(L.embedCount)
      const perHost = size / 2 - 1
      for (let hops = 0; host !== LIST_END && hops <= count; hops++) {
        const k = objectOf(host)
        if (embed > perHost) {
          bad('counter-disagrees', record + L.embedCount, 0, `its embed_count_ ${embed} is more than an object of ${size} bytes holds: the rest of its list is not read`)
          break
        }
        const at = start + k * size
        const words = Number.isInteger(k) && k < count ? memory.readBytes(at, (embed + 1) * 2) : undefined
        if (!words) {
          bad('overwritten-link', hostAt, 0, `free-list host index ${host} (read at ${hex(hostAt)}) is no object of the span: the rest of its list is not read`)
          break
        }
        let ok = true
        for (let j = 1; j <= embed && ok; j++) ok = free(objectOf(words.readUInt16LE(j * 2)), at + j * 2, at, `the list hosted by ${hex(at)}`)
        if (!ok || !free(k, hostAt, 0, 'its list')) break
        host = words.readUInt16LE(0)
        hostAt = at
        embed = perHost
      }
    }
    const expected = count - spans.allocated[s]!
    // A broken list leaves its tail uncounted: that finding says so already.
    if (found !== expected && !broken) {
      bad('counter-disagrees', record + L.allocated, 0, `${found} free objects found, its allocated_ count (${spans.allocated[s]} of ${count}) says ${expected}`)
    }
  }
}
