import type {ObjectRef} from '../../tcmalloc/heap-objects.js'
import type {NamingContext} from '../recogniser.js'
import {VIA_LAYOUT} from '../via.js'

/**
 * What the layout tests read and how they name: words of the process image (untrusted, undefined
 * where the core has none) and the live, still unnamed blocks that start at an address.
 */
export class Probe {
  /** The object or root range whose words are being read: a container lies wholly inside it. */
  ownerStart = 0
  ownerEnd = 0

  constructor(readonly ctx: NamingContext) {}

  /** Whether [from, to) lies inside the current owner (a layout read past it is not the owner's). */
  holds(from: number, to: number): boolean {
    return from >= this.ownerStart && to <= this.ownerEnd
  }

  word(addr: number): number | undefined {
    return this.ctx.program.core.memory.readU64(addr)
  }

  /** The low 32 bits of a word (an int field, such as an rb-tree node's colour). */
  u32(addr: number): number | undefined {
    return this.ctx.program.core.memory.readU32(addr)
  }

  /** The live slot that starts exactly at addr and has no name yet, else undefined. */
  block(addr: number | undefined): ObjectRef | undefined {
    if (addr === undefined || addr % 8 !== 0 || addr <= 0) return undefined
    const o = this.ctx.objects.findObject(addr)
    if (!o || o.start !== addr || this.ctx.objects.state[o.index] !== this.ctx.live) return undefined
    return this.ctx.names.typeOf[o.index] === 0 ? o : undefined
  }

  /** Whether the allocator gives a block of this size for this request. */
  fits(request: number, block: ObjectRef): boolean {
    return this.ctx.fits(request, block.size)
  }

  name(block: ObjectRef, name: string, kind: string = name): void {
    this.ctx.names.assign(block.index, name, kind, VIA_LAYOUT, block.start)
  }
}

/** Longest walk of one container (nodes, blocks, buckets): past it the owner is taken as not one. */
export const MAX_ELEMENTS = 1 << 24
