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
 * Every live block that is an LG, per layout (each list in address order): its lua_State's tt says
 * thread, its l_G points into the same block just after the LX, and that global_State's
 * mainthread points back at the lua_State. Three words that agree with each other and with the
 * block's start and size: no other block does that. Only blocks whose size agrees with sizeof(LG)
 * are read, in one pass for every layout: a pass per layout read the 5.3 and 5.4 candidates (the
 * same sizes) twice, 80,000 blocks of 2 KiB or so each time on workloaddemo's timing core.
 */
export function findLuaStates(ctx: NamingContext, heap: LuaHeap, layouts: readonly LuaLayout[]): LuaStateBlock[][] {
  const found: LuaStateBlock[][] = layouts.map(() => [])
  if (layouts.length === 0) return found
  const min = Math.min(...layouts.map(l => l.lg))
  const max = Math.max(...layouts.map(l => 2 * l.lg))
  ctx.objects.forEachObject((slot, start, size) => {
    layouts.forEach((layout, i) => {
      if (size < layout.lg || size > 2 * layout.lg) return
      const mainthread = start + layout.extraSpace
      const global = start + layout.globalInLg
      if (heap.u8(mainthread + layout.tt) !== layout.tag.thread) return
      if (heap.pointer(mainthread + layout.state.lG) !== global) return
      if (heap.pointer(global + layout.global.mainthread) !== mainthread) return
      found[i]!.push({slot, block: start, size, mainthread, global})
    })
  }, ctx.live, min, max)
  return found
}
