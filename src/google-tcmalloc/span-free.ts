import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {hexWord} from '../core/words.js'
import {CENTRAL_CACHE, LIVE} from '../heap/states.js'
import type {DamageKind} from '../heap/damage.js'
import type {FreeMarker} from './free-marker.js'
import type {GoogleLayout} from './layout.js'

/** ObjIdx's end of list (Span::kListEnd, uint16 −1). */
const LIST_END = 0xffff
/** Objects are 8-byte aligned: a list index is the offset in the span's page divided by 8 (kAlignmentShift). */
const ALIGNMENT_SHIFT = 3

/** A 16-bit field's value as a finding shows it: the field is two bytes, not the word around it. */
const hex16 = (v: number) => `0x${v.toString(16)}`

/** Something wrong in one span's free objects, reported once the walk knows how many objects it cost. */
interface Problem {
  kind: DamageKind
  /** The word that held the bad value, the free object it lies in (0: the span record), and that value. */
  slot: number
  entry: number
  value: string
  message: string
  /** Free objects this problem alone hides: index words overwritten, each standing for one. */
  hides: number
  /** It ends the list: what the span counts free past it is not reached. */
  cuts: boolean
}

/**
 * The free objects each small span keeps itself (span.h, "Freelist organization"): those are
 * what CentralFreeList holds, counted in the central-cache state. Spans of objects of at least
 * kPageSize / kBitmapSize bytes keep a bitmap (bit set = free); smaller objects, in spans of one
 * page, keep an embedded cache of up to kCacheSize indices and a list whose hosts are free
 * objects holding further indices: host[0] links the next host, host[1..embed] are free.
 * Span::allocated_ says how many objects the span has handed out: what the walk finds must be the
 * rest, or the span is reported. A class of one object per span keeps no free list at all
 * (CentralFreeList hands whole spans out and takes them back): its object is live or cached.
 *
 * A bad bit or index is reported and passed over: each names one object, the others stay exact.
 * A host's words are one finding (an overrun from the object before it writes several at once),
 * at the first bad word, with its 16-bit value. A bad link ends the list: its finding counts the
 * objects allocated_ says are free that the walk did not reach.
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
    const name = `span record ${hex(record)} (objects at ${hex(start)}, class ${cls})`
    const problems: Problem[] = []
    let found = 0
    const take = (k: number) => {
      state[first + k] = CENTRAL_CACHE
      marker.bytes[CENTRAL_CACHE]! += size
      marker.objects[CENTRAL_CACHE]!++
      found++
    }
    /** Object k for index k (bitmap) or list index idx × 8 / size, or why it is none. */
    const check = (k: number, what: string): number | [DamageKind, string] => {
      if (!Number.isInteger(k) || k < 0 || k >= count) return ['overwritten-link', `${what} names no object of the span (${count} objects)`]
      if (state[first + k] !== LIVE) return ['on-a-list-twice', `${what} names object ${k}, free already`]
      return k
    }
    const objectOf = (idx: number) => (idx * 2 ** ALIGNMENT_SHIFT) / size
    /** Checks each word in `words` (slot address, value, object); takes the good ones; the bad ones are one problem of `entry`. */
    const takeAll = (words: Array<[number, number, number]>, entry: number, where: string, link: Problem | null, label = (slot: number, value: number) => `${hex16(value)} at ${hex(slot)}`) => {
      const bad: string[] = []
      let firstBad: [number, number, DamageKind] | null = null
      for (const [slot, value, k] of words) {
        const c = check(k, label(slot, value))
        if (typeof c === 'number') take(c)
        else {
          bad.push(c[1])
          firstBad ??= [slot, value, c[0]]
        }
      }
      if (!firstBad && !link) return
      const hides = bad.length
      const message = `${name}: ${where}: ${[...(link ? [link.message] : []), ...bad].join('; ')}`
      // The link is word 0 of its host: the first bad word when it is one.
      problems.push(link ? {...link, message, hides} : {kind: firstBad![2], slot: firstBad![0], entry, value: hex16(firstBad![1]), message, hides, cuts: false})
    }
    // The embedded cache may run past the record's declared size (spans allocated for a larger cache).
    const bytes = memory.readBytes(record, Math.max(L.size, L.cache + 2 * L.cacheEntries))
    if (!bytes) continue
    if (size >= bitmapMinSize) {
      const words: Array<[number, number, number]> = []
      for (let w = 0; w * 64 < L.bitmapBits; w++) {
        const lo = bytes.readUInt32LE(L.cache + w * 8)
        const hi = bytes.readUInt32LE(L.cache + w * 8 + 4)
        for (let b = 0; b < 64; b++) if ((b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1) === 1) words.push([record + L.cache + w * 8, b, w * 64 + b])
      }
      // A bitmap word's value is the whole word; a bit past the span's objects is what is wrong in it.
      takeAll(words, 0, 'its bitmap', null, (slot, bit) => `bit ${bit} of the word at ${hex(slot)}`)
      for (const p of problems) p.value = hexWord(memory, p.slot)
    } else {
      const cached = bytes[L.cacheSize]! % 2 ** L.cacheSizeBits
      const cache: Array<[number, number, number]> = []
      for (let i = 0; i < Math.min(cached, L.cacheEntries); i++) {
        const idx = bytes.readUInt16LE(L.cache + i * 2)
        cache.push([record + L.cache + i * 2, idx, objectOf(idx)])
      }
      takeAll(cache, 0, 'its cache', null)
      // Each host is a free object: word 0 links the next host, words 1..embed are free objects' indices.
      let idx = bytes.readUInt16LE(L.freelist)
      let linkAt = record + L.freelist
      let linkHost = 0
      let embed = bytes.readUInt16LE(L.embedCount)
      const perHost = size / 2 - 1
      for (let hops = 0; idx !== LIST_END && hops <= count; hops++) {
        const k = check(objectOf(idx), linkHost ? `the link ${hex16(idx)} at ${hex(linkAt)}` : `its freelist_ ${hex16(idx)}`)
        if (typeof k !== 'number') {
          // The host before holds the link: reported there (below); freelist_ itself is the record's.
          if (!linkHost) problems.push({kind: k[0], slot: linkAt, entry: 0, value: hex16(idx), message: `${name}: ${k[1]}: the rest of its list is not read`, hides: 0, cuts: true})
          break
        }
        if (embed > perHost) {
          problems.push({kind: 'counter-disagrees', slot: record + L.embedCount, entry: 0, value: hex16(embed), message: `${name}: its embed_count_ ${embed} is more than an object of ${size} bytes holds: the rest of its list is not read`, hides: 0, cuts: true})
          break
        }
        const at = start + k * size
        const host = memory.readBytes(at, (embed + 1) * 2)
        if (!host) {
          problems.push({kind: 'overwritten-link', slot: linkAt, entry: linkHost, value: hex16(idx), message: `${name}: free-list host ${hex(at)} is not in the core: the rest of its list is not read`, hides: 0, cuts: true})
          break
        }
        take(k)
        const entries: Array<[number, number, number]> = []
        for (let j = 1; j <= embed; j++) entries.push([at + j * 2, host.readUInt16LE(j * 2), objectOf(host.readUInt16LE(j * 2))])
        const next = host.readUInt16LE(0)
        // The link is checked before the entries take their objects: a link to one of them is a cycle.
        const nk = next === LIST_END ? 0 : check(objectOf(next), `its link ${hex16(next)} at ${hex(at)}`)
        const inEntries = typeof nk === 'number' && next !== LIST_END && entries.some(e => e[2] === nk)
        const link: Problem | null =
          typeof nk !== 'number' || inEntries
            ? {kind: typeof nk !== 'number' ? nk[0] : 'on-a-list-twice', slot: at, entry: at, value: hex16(next), message: `${typeof nk !== 'number' ? nk[1] : `its link ${hex16(next)} at ${hex(at)} names one of its own entries`}: the rest of its list is not read`, hides: 0, cuts: true}
            : null
        takeAll(entries, at, `the list hosted by free object ${hex(at)}`, link)
        if (link) break
        idx = next
        linkAt = at
        linkHost = at
        embed = perHost
      }
    }
    const expected = count - spans.allocated[s]!
    const hidden = problems.reduce((n, p) => n + p.hides, 0)
    const cut = problems.find(p => p.cuts)
    // What allocated_ says is free and the walk did not find: behind the cut, or hidden by bad words.
    const lost = Math.max(0, expected - found)
    for (const p of problems) {
      const behind = p === cut ? Math.max(0, lost - (hidden - p.hides)) : p.hides
      marker.bad++
      marker.warnings.addDamage('span-free-list', p.message, record, p.slot)
      marker.report(p.kind, cls, {where: `${name}'s free objects`, structure: record, slot: p.slot, entry: p.entry, behind, span: start}, 0, p.message, p.value)
    }
    if (!cut && found + hidden !== expected) {
      const message = `${name}: ${found} free objects found${hidden ? ` and ${hidden} hidden by bad words` : ''}, its allocated_ count (${spans.allocated[s]} of ${count}) says ${expected}`
      marker.bad++
      marker.warnings.addDamage('span-free-list', message, record, record + L.allocated)
      marker.report('counter-disagrees', cls, {where: `${name}'s free objects`, structure: record, slot: record + L.allocated, entry: 0, behind: 0, span: start}, 0, message, hex16(spans.allocated[s]!))
    }
  }
}
