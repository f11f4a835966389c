import type {NamingContext} from '../recogniser.js'
import {USER_SPACE_END} from '../../core/address-space.js'

/** A live block as the Lua walk uses it: its slot, first byte and size. */
export interface LuaBlock {
  slot: number
  start: number
  size: number
}

/**
 * The heap as the Lua walk reads it: words of the core (undefined where the core has none) and
 * live blocks. Every value read is untrusted; `block` is the one test a pointer passes before
 * anything is named from it.
 */
export class LuaHeap {
  readonly memory: NamingContext['program']['core']['memory']

  constructor(private readonly ctx: NamingContext) {
    this.memory = ctx.program.core.memory
  }

  /** A pointer-sized word, undefined when unreadable; a pointer only when in the user address range. */
  pointer(addr: number): number | undefined {
    const w = this.memory.readU64(addr)
    return w !== undefined && w < USER_SPACE_END ? w : undefined
  }

  u8(addr: number): number | undefined {
    return this.memory.readU8(addr)
  }

  u16(addr: number): number | undefined {
    return this.memory.readU16(addr)
  }

  u32(addr: number): number | undefined {
    return this.memory.readU32(addr)
  }

  i32(addr: number): number | undefined {
    return this.memory.readI32(addr)
  }

  u64(addr: number): number | undefined {
    return this.memory.readU64(addr)
  }

  /**
   * The live block that starts `offset` bytes before `addr` and whose size agrees with `needed`,
   * the bytes Lua asked for: at least that, and at most twice (TCMalloc rounds a request up to its
   * size class, < 2× above 8 bytes, and its realloc keeps a block in place only while the new size
   * is at least half the block). Undefined otherwise.
   */
  block(addr: number, needed: number, offset = 0): LuaBlock | undefined {
    if (!(addr > 0 && Number.isSafeInteger(needed) && needed > 0)) return undefined
    const o = this.ctx.objects.findObject(addr)
    if (o === undefined || o.start !== addr - offset) return undefined
    if (this.ctx.objects.state[o.index] !== this.ctx.live) return undefined
    if (needed > o.size || needed * 2 < o.size) return undefined
    return {slot: o.index, start: o.start, size: o.size}
  }
}
