import {hex} from '../errors.js'
import {spanIndexAt} from '../heap/slot-table.js'
import {LIVE} from '../heap/states.js'
import type {Warnings} from '../heap/warnings.js'
import type {GoogleSpanTable} from './spans.js'

/**
 * Marks the free objects that a cache or a span's free list names. No entry is trusted on its
 * word: it must start an object of the list's class in a span in use, and not be free already
 * (which also ends a cycle). A bad entry is one warning naming the list and the entry; the walk
 * goes on with the next.
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
    readonly spans: GoogleSpanTable,
    readonly state: Uint8Array,
    readonly pageSize: number,
    readonly warnings: Warnings,
  ) {}

  /** Marks the object at addr (of tcmalloc class `cls`) with `to`; false, with a warning, when it is none. */
  mark(addr: number, cls: number, to: number, where: string): boolean {
    const s = spanIndexAt(this.spans, this.pageSize, addr)
    let why: string | null = null
    if (s < 0) why = 'in no span in use'
    else if (this.spans.tcmallocClass[s] !== cls) why = `in a span of class ${this.spans.tcmallocClass[s]}, not ${cls}`
    else {
      const k = (addr - this.spans.start[s]!) / this.spans.objectSize[s]!
      if (!Number.isInteger(k) || k >= this.spans.objectCount[s]!) why = 'not the start of an object'
      else {
        const slot = this.spans.firstObject[s]! + k
        if (this.state[slot] !== LIVE) why = 'free already (on two lists, or twice on one)'
        else {
          this.state[slot] = to
          this.bytes[to]! += this.spans.objectSize[s]!
          this.objects[to]!++
          if (this.owner >= 0) {
            this.ownedSlots.push(slot)
            this.ownedBy.push(this.owner)
          }
          return true
        }
      }
    }
    this.bad++
    this.warnings.addDamage('free-list', `${where}: entry ${hex(addr)} is ${why}: not counted free`, addr)
    return false
  }
}
