import type {NamingContext} from '../recogniser.js'
import type {LuaHeap} from './lua-heap.js'
import type {LuaLayout} from './lua-layouts.js'

/** One Lua interpreter: the block lua_newstate allocated (LG: main thread, then global_State). */
export interface LuaStateBlock {
  slot: number
  /** The block's first byte (LX's extra space). */
  block: number
  size: number
  /** The main thread's lua_State (block + extraSpace): what lua_newstate returned. */
  mainthread: number
  global: number
}

/**
 * Every live block that is an LG: its lua_State's tt says thread, its l_G points into the same
 * block just after the LX, and that global_State's mainthread points back at the lua_State. Three
 * words that agree with each other and with the block's start and size: no other block does that.
 * Only blocks whose size agrees with sizeof(LG) are read.
 */
export function findLuaStates(ctx: NamingContext, heap: LuaHeap, layout: LuaLayout): LuaStateBlock[] {
  const found: LuaStateBlock[] = []
  ctx.objects.forEachObject((slot, start, size) => {
    if (size < layout.lg || size > 2 * layout.lg) return
    const mainthread = start + layout.extraSpace
    const global = start + layout.globalInLg
    if (heap.u8(mainthread + layout.tt) !== layout.tag.thread) return
    if (heap.pointer(mainthread + layout.state.lG) !== global) return
    if (heap.pointer(global + layout.global.mainthread) !== mainthread) return
    found.push({slot, block: start, size, mainthread, global})
  }, ctx.live, layout.lg, 2 * layout.lg)
  return found
}
