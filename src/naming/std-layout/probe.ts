import type {ObjectRef} from '../../heap/objects.js'
import type {NamingContext} from '../recogniser.js'
import {VIA_LAYOUT} from '../via.js'
import {SlotFinder} from '../slot-finder.js'

/** A live block a layout test found: its slot, address and size. */
export type Block = Pick<ObjectRef, 'index' | 'start' | 'size'>

/**
 * What the layout tests read and how they name: words of the process image (untrusted, undefined
 * where the core has none) and the live, still unnamed blocks that start at an address.
 *
 * The owner being read (an object or a root range) is at hand in `words` (from `wordsStart`), so
 * the owner-side checks, which every test makes first and which reject almost every word, cost no
 * read of the core; only what passes them reads the blocks pointed at.
 */
export class Probe {
  /** The object or root range whose words are being read: a container lies wholly inside it. */
  ownerStart = 0
  ownerEnd = 0
  /** Words already read around the owner, as 32-bit halves, and the address of words[0]. */
  words: Uint32Array | null = null
  wordsStart = 0
  /** Past the last byte offset from wordsStart at which a whole word is in `words` (0: none). */
  private wordsLimit = 0

  /** The slot holding an address (a table of the heap's pages). */
  private readonly slots: SlotFinder
  /** The slots' states (fixed while naming; read once, not through the objects' getter per word). */
  private readonly state: Uint8Array

  constructor(readonly ctx: NamingContext) {
    this.state = ctx.objects.state
    // Every word of every owner that points into the heap asks for its block.
    this.slots = new SlotFinder(ctx.objects)
  }

  /** Whether [from, to) lies inside the current owner (a layout read past it is not the owner's). */
  holds(from: number, to: number): boolean {
    return from >= this.ownerStart && to <= this.ownerEnd
  }

  /** Reads from here on come from `bytes` (what the core holds at `start`, 8-aligned) where they can. */
  useBytes(bytes: Buffer, start: number): void {
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4))
    this.wordsStart = start
    this.wordsLimit = this.words.length * 4 - 4
  }

  /** Reads from here on come from the core. */
  useNoBytes(): void {
    this.words = null
    this.wordsLimit = 0
  }

  // word and u32 run for every word of every owner that points into the heap, several times each:
  // the offset is tested in integer arithmetic (it is below wordsLimit, at most a read's
  // SLOT_CHUNK, before `& 3` looks at it), not by a division and Number.isInteger: a script that
  // models the bench core's heap and runs this tier took 0.88 of the time (BENCHMARKS.md, issue 33).
  word(addr: number): number | undefined {
    const off = addr - this.wordsStart
    if (off >= 0 && off < this.wordsLimit && (off & 3) === 0) {
      const w = this.words!
      const i = off >>> 2
      return w[i]! + w[i + 1]! * 0x1_0000_0000
    }
    return this.ctx.program.core.memory.readU64(addr)
  }

  /** The low 32 bits of a word (an int field, such as an rb-tree node's colour). */
  u32(addr: number): number | undefined {
    const off = addr - this.wordsStart
    if (off >= 0 && off < this.wordsLimit + 4 && (off & 3) === 0) return this.words![off >>> 2]!
    return this.ctx.program.core.memory.readU32(addr)
  }

  /**
   * The live slot that starts exactly at addr and has no name yet (or, given `kind`, a name of that
   * kind: another tier, debug information, may have named some of a container's blocks first),
   * else undefined.
   */
  block(addr: number | undefined, kind?: string): Block | undefined {
    const slot = this.liveSlot(addr)
    if (slot === undefined) return undefined
    const names = this.ctx.names
    if (names.typeOf[slot.index] !== 0 && (kind === undefined || names.kindOf(slot.index) !== kind)) return undefined
    return slot
  }

  /** The live slot that starts exactly at addr, named or not, else undefined. */
  liveSlot(addr: number | undefined): Block | undefined {
    if (addr === undefined || addr % 8 !== 0 || addr <= 0) return undefined
    const f = this.slots
    if (!f.find(addr) || f.start !== addr || this.state[f.index] !== this.ctx.live) return undefined
    return {index: f.index, start: addr, size: f.size}
  }

  /** Whether the allocator gives a block of this size for this request. */
  fits(request: number, block: Block): boolean {
    return this.ctx.fits(request, block.size)
  }

  name(block: Block, name: string, kind: string = name): void {
    this.ctx.names.assign(block.index, name, kind, VIA_LAYOUT, block.start)
  }
}

/** Longest walk of one container (nodes, blocks, buckets): past it the owner is taken as not one. */
export const MAX_ELEMENTS = 1 << 24
