import {hex} from '../../errors.js'
import type {NamingContext, Recogniser} from '../recogniser.js'
import {VIA_RUNTIME} from '../via.js'
import {findLuaStates} from './find-states.js'
import {LuaHeap} from './lua-heap.js'
import {LUA_LAYOUTS} from './lua-layouts.js'
import {LuaStateWalk, type LuaStateTally} from './state-walk.js'

/**
 * Lua 5.1, 5.3 and 5.4 interpreters embedded in the program and allocating through the process
 * malloc: each lua_State's global_State is found by its own words (find-states.ts, with each
 * release line's layout, lua-layouts.ts), and its collector's lists name every object and the
 * blocks objects own (state-walk.ts). Which lua_State owns what is told in one note per state.
 *
 * It applies to every program: finding an LG reads three words of the few live blocks whose size
 * agrees with sizeof(LG), which is cheap, and needs no symbol (Lua is often linked in statically,
 * stripped). LuaJIT's luaL_newstate does not allocate from malloc (its own allocator, on mmap'd
 * memory), and its layouts are not here.
 */
export const luaRecogniser: Recogniser = {
  label: 'lua',
  via: VIA_RUNTIME,
  applies: () => true,
  run(ctx: NamingContext): void {
    const heap = new LuaHeap(ctx)
    const found = new Set<number>()
    const byLayout = findLuaStates(ctx, heap, LUA_LAYOUTS)
    const states = LUA_LAYOUTS.flatMap((layout, i) =>
      byLayout[i]!.filter(s => !found.has(s.slot) && found.add(s.slot)).map(state => ({layout, state})))
    if (states.length === 0) return
    const claimed = new Uint8Array(ctx.names.slots)
    let stepLimit = 0
    ctx.objects.forEachObject(() => stepLimit++, ctx.live)
    const total: LuaStateTally = {objects: 0, objectBytes: 0, storage: 0, storageBytes: 0, byName: new Map()}
    for (const {layout, state} of states) {
      const t = new LuaStateWalk(ctx, heap, layout, claimed, state, stepLimit + 1).run()
      ctx.note(`lua_State ${hex(state.mainthread)} (Lua ${layout.version}, global_State ${hex(state.global)}): ` +
        `${t.objects} objects (${t.objectBytes} bytes: ${byName(t)}) and ${t.storage} blocks they own (${t.storageBytes} bytes)`)
      total.objects += t.objects
      total.objectBytes += t.objectBytes
      total.storage += t.storage
      total.storageBytes += t.storageBytes
    }
    const versions = [...new Set(states.map(s => s.layout.version))].join(' and ')
    ctx.note(`${states.length} Lua ${versions} state${states.length === 1 ? '' : 's'}: ${total.objects} objects and ` +
      `${total.storage} storage blocks named (${total.objectBytes + total.storageBytes} bytes) from their collectors' lists`)
  },
}

function byName(t: LuaStateTally): string {
  return [...t.byName].sort((a, b) => b[1] - a[1]).map(([n, c]) => `${c} ${n.slice(4)}`).join(', ')
}
