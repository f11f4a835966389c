import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {hexWord} from '../core/words.js'
import type {DamageKind, DamageLog} from '../heap/damage.js'
import {spanIndexAt} from '../heap/slot-table.js'
import {LIVE} from '../heap/states.js'
import type {Warnings} from '../heap/warnings.js'
import type {GoogleSpanTable} from './spans.js'

/** Where a cache or list entry was read: for a damage finding to name the structure and the word. */
export interface EntrySite {
  /** The list or cache, in words ("the per-CPU slab of CPU 1, class 5"). */
  where: string
  /** The structure's address (the slab header, the transfer cache, the FreeList). */
  structure: number
  /** The word the entry was read from. */
  slot: number
  /** The free object whose link word `slot` is (0: `slot` is a slot of the structure itself). */
  entry: number
  /** Entries the list's own count puts after this one, lost with it (0: each slot stands alone, as in a slab or transfer cache). */
  behind: number
  /** The span whose own list this is (its first object): the list lives in that span's objects. */
  span?: number
  /** Where an entry that is free already was reached first, when the structure can tell (a slab's other slot): 0 when not known. */
  reachedFirst?: (addr: number) => number
}

/**
 * Marks the free objects that a cache or a span's free list names. No entry is trusted on its
 * word: it must start an object of the list's class in a span in use, and not be free already
 * (which also ends a cycle). A bad entry is one damage finding naming the list, the word it was
 * read from and its value, and a warning; the walk goes on with the next.
 */
export class FreeMarker {
  /** Bytes and objects marked per state. */
  readonly bytes = new Float64Array(8)
  readonly objects = new Float64Array(8)
  bad = 0
  /** The front-end cache being walked (its index among the model's caches), or −1: each slot marked under it is recorded as its. */
  owner = -1
  readonly ownedSlots: number[] = []
  readonly ownedBy: number[] = []

  constructor(
    readonly memory: AddressSpace,
    readonly spans: GoogleSpanTable,
    readonly state: Uint8Array,
    readonly pageSize: number,
    readonly warnings: Warnings,
    readonly damage: DamageLog,
    /** Bytes of an object of tcmalloc class `cls` (for the bytes a lost list tail holds). */
    readonly classSize: (cls: number) => number,
    /** The index's number for tcmalloc class `cls` (classes are numbered densely: heap.ts), 0 where no span has it. */
    readonly indexClass: (cls: number) => number,
  ) {}

  /** Marks the object at addr (of tcmalloc class `cls`) with `to`; false, with a damage finding, when it is none. */
  mark(addr: number, cls: number, to: number, site: EntrySite): boolean {
    const s = spanIndexAt(this.spans, this.pageSize, addr)
    let why: string
    let kind: DamageKind
    if (s < 0) [kind, why] = ['overwritten-link', 'in no span in use']
    else if (this.spans.tcmallocClass[s] !== cls) [kind, why] = ['link-into-other-span', `in a span of class ${this.spans.tcmallocClass[s]}, not ${cls}`]
    else {
      const k = (addr - this.spans.start[s]!) / this.spans.objectSize[s]!
      if (!Number.isInteger(k) || k >= this.spans.objectCount[s]!) [kind, why] = ['entry-not-object-start', 'not the start of an object']
      else {
        const slot = this.spans.firstObject[s]! + k
        if (this.state[slot] === LIVE) {
          this.state[slot] = to
          this.bytes[to]! += this.spans.objectSize[s]!
          this.objects[to]!++
          if (this.owner >= 0) {
            this.ownedSlots.push(slot)
            this.ownedBy.push(this.owner)
          }
          return true
        }
        ;[kind, why] = ['on-a-list-twice', 'free already (on two lists, or twice on one)']
      }
    }
    this.bad++
    const lost = site.behind > 0 ? `; the ${site.behind} entries its count puts after it are not read and count live` : ''
    const firstAt = kind === 'on-a-list-twice' ? (site.reachedFirst?.(addr) ?? 0) : 0
    const other = firstAt ? `; it was reached first at ${hex(firstAt)}` : ''
    // The word as the core holds it: a value past 2^53 would be rounded as a number.
    const message = `${site.where}: entry ${hexWord(this.memory, site.slot)} (read at ${hex(site.slot)}) is ${why}: not counted free${lost}${other}`
    this.warnings.addDamage('free-list', message, site.structure, site.slot, ...(addr > 0 && addr < 2 ** 48 ? [addr] : []))
    this.report(kind, cls, site, addr, message, undefined, firstAt)
    return false
  }

  /**
   * Adds a finding about a list of class `cls` (a span's own list reports here too), with the value
   * as the structure holds it (the 64-bit word at the slot unless given: a span's list indices are 16 bits).
   */
  report(kind: DamageKind, cls: number, site: EntrySite, target: number, message: string, value = hexWord(this.memory, site.slot), reachedFirstAt = 0): void {
    this.damage.add({
      kind,
      structure: site.where,
      structureAddress: site.structure,
      sizeClass: this.indexClass(cls),
      tid: null,
      slot: site.slot,
      value,
      entry: site.entry,
      ...(reachedFirstAt ? {reachedFirstAt} : {}),
      ...(site.span ? {span: site.span} : {}),
      target: target > 0 && target < 2 ** 48 ? target : 0,
      objectsBehind: site.behind,
      recovered: 0,
      bytesBehind: site.behind > 0 ? site.behind * this.classSize(cls) : 0,
      message,
    })
  }
}
