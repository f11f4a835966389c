import {hex} from '../../errors.js'
import type {NamingContext} from '../recogniser.js'
import {VIA_RUNTIME} from '../via.js'
import type {LuaBlock, LuaHeap} from './lua-heap.js'
import type {LuaLayout} from './lua-layouts.js'
import type {LuaStateBlock} from './find-states.js'

export const LUA_OBJECT = 'lua object'
export const LUA_STORAGE = 'lua storage'
/** The walk's marks of a slot: named once, or a 5.3 upvalue (which closures share). */
const CLAIMED = 1
const SHARED = 2

/** What one lua_State owns: its objects and the blocks they own, counted and summed by block size. */
export interface LuaStateTally {
  objects: number
  objectBytes: number
  storage: number
  storageBytes: number
  /** Objects per name (`lua:table` → count). */
  byName: Map<string, number>
}

/**
 * Walks one Lua state's objects, as its collector links them, by CommonHeader's `next`: 5.3 and
 * 5.4's lists allgc (which holds every string too, and in 5.4 the generational collector's
 * survival/old lists as parts of the chain), finobj, tobefnz and fixedgc; 5.1's rootgc, the ring
 * tmudata and each thread's openupval. Then the string table's chains, which hold 5.1's strings
 * and only confirm 5.3 and 5.4's. Each object is named when its block starts at its address and
 * agrees with the size its own header gives; the blocks it owns (a table's array and nodes, a
 * proto's arrays, a thread's stack and CallInfos, the string table's buckets, 5.1's buffer; in
 * 5.3 a Lua closure's upvalues, shared, reference-counted blocks) are named when they are live
 * blocks of the size the owner's fields give.
 *
 * A list's walk stops, with a warning, at the first word it cannot prove (not a live block, a
 * size that disagrees, an unknown tag, an object met twice: a cycle). Every step names a block
 * not named before or stops, so all the walks together take at most one step per live block
 * (the string table's, which also passes strings already named, has that budget of its own).
 * Names given before a stop were each proven on their own.
 */
export class LuaStateWalk {
  readonly tally: LuaStateTally = {objects: 0, objectBytes: 0, storage: 0, storageBytes: 0, byName: new Map()}

  constructor(
    private readonly ctx: NamingContext,
    private readonly heap: LuaHeap,
    private readonly L: LuaLayout,
    /** One byte per slot, shared by every state's walk: CLAIMED (a block is owned once), or SHARED (a 5.3 upvalue). */
    private readonly claimed: Uint8Array,
    private readonly state: LuaStateBlock,
    private readonly stepLimit: number,
  ) {}

  run(): LuaStateTally {
    const {L, state} = this
    const g = state.global
    this.claim({slot: state.slot, start: state.block, size: state.size}, 'lua:state', LUA_OBJECT, state.mainthread)
    this.threadStorage(state.mainthread)
    const hash = this.heap.pointer(g + L.global.strtHash)
    const buckets = this.heap.i32(g + L.global.strtSize)
    // the chains are walked only from a bucket array that is a live block of that many pointers
    const strings = hash !== undefined && buckets !== undefined && buckets > 0 && this.storage(hash, buckets * 8, 'lua:string table', g)
    if (L.global.buffer !== null) {
      const buffer = this.heap.pointer(g + L.global.buffer.pointer)
      const size = this.heap.u64(g + L.global.buffer.size)
      if (buffer !== undefined && buffer !== 0 && size !== undefined && size > 0) this.storage(buffer, size, 'lua:buffer', g)
    }
    for (const [list, offset, circular] of L.global.lists) {
      const head = this.heap.pointer(g + offset)
      // a ring is entered at its head's successor and left after the head
      if (circular) this.list(list, head === undefined || head === 0 ? head : this.heap.pointer(head + L.next), head)
      else this.list(list, head)
    }
    if (strings) this.stringTable(hash!, buckets!)
    return this.tally
  }

  /** A list by `next`, to its NULL, or through `last` when it is a ring. */
  private list(name: string, first: number | undefined, last?: number): void {
    let o = first
    for (let steps = 0; o !== undefined && o !== 0; steps++) {
      if (steps >= this.stepLimit) return this.stop(`${name} has more objects than the heap has blocks`, o)
      const problem = this.object(o, false)
      if (problem !== null) return this.stop(`${name}: ${problem}`, o)
      if (o === last) return
      o = this.heap.pointer(o + this.L.next)
    }
    if (o === undefined) this.stop(`${name}: a next field that is no pointer`, first ?? 0)
  }

  /** The string table's chains: each string in them must be one the lists named, or one proven here. */
  private stringTable(hash: number, buckets: number): void {
    let steps = 0
    for (let i = 0; i < buckets; i++) {
      let s = this.heap.pointer(hash + i * 8)
      for (; s !== undefined && s !== 0; steps++) {
        if (steps >= this.stepLimit) return this.stop('the string table holds more strings than the heap has blocks', s)
        const b = this.ctx.objects.findObject(s)
        const named = b !== undefined && b.start === s && this.claimed[b.index] === CLAIMED
        if (!named) {
          if (this.heap.u8(s + this.L.tt) !== this.L.tag.shortString) return this.stop('a string table entry that is no short string', s)
          const problem = this.object(s, true)
          if (problem !== null) return this.stop(`string table: ${problem}`, s)
        }
        s = this.heap.pointer(s + this.L.string.hnext)
      }
    }
  }

  /** Names one collectable object and what it owns; a problem (the walk stops) or null. */
  private object(o: number, fromStrings: boolean): string | null {
    const {L, heap} = this
    const tt = heap.u8(o + L.tt)
    if (tt === undefined) return 'an object outside the core'
    let needed: number | undefined
    let offset = 0
    let name: string
    switch (tt) {
      case L.tag.shortString: {
        const len = L.string.shrlen === null ? heap.u64(o + L.string.lnglen) : heap.u8(o + L.string.shrlen)
        needed = len === undefined ? undefined : L.string.contents + len + 1
        name = 'lua:string'
        break
      }
      case L.tag.longString: {
        const len = heap.u64(o + L.string.lnglen)
        needed = len === undefined ? undefined : L.string.contents + len + 1
        name = 'lua:string'
        break
      }
      case L.tag.table:
        needed = L.table.size
        name = 'lua:table'
        break
      case L.tag.luaClosure:
      case L.tag.cClosure: {
        const n = heap.u8(o + L.closure.nupvalues)
        const lua = this.isLuaClosure(o, tt)
        needed = n === undefined ? undefined : lua ? L.closure.lUpvals + n * L.closure.upvalPointer : L.closure.cUpvalue + n * L.closure.tvalue
        name = 'lua:closure'
        break
      }
      case L.tag.userdata: {
        const nuv = L.udata.nuvalue === null ? 0 : heap.u16(o + L.udata.nuvalue)
        const len = heap.u64(o + L.udata.len)
        needed = nuv === undefined || len === undefined ? undefined : (nuv === 0 ? L.udata.memNoUserValues : L.udata.uv + nuv * L.udata.uvalue) + len
        name = 'lua:userdata'
        break
      }
      case L.tag.thread:
        // 5.4 links the main thread first on allgc: it is the state's own block, named already.
        if (o === this.state.mainthread) return null
        needed = L.lx
        offset = L.extraSpace
        name = 'lua:thread'
        break
      case L.tag.upvalue:
        needed = L.upvalue.size
        name = 'lua:upvalue'
        break
      case L.tag.proto:
        needed = L.proto.size
        name = 'lua:proto'
        break
      default:
        return `an object with tag ${tt}, which Lua ${L.version} does not have`
    }
    if (fromStrings && name !== 'lua:string') return 'a string table entry that is no string'
    const b = needed === undefined ? undefined : heap.block(o, needed, offset)
    if (b === undefined) return `${name} at ${hex(o)} is not a live block of the size its header gives`
    if (this.claimed[b.slot] !== 0) return `${name} at ${hex(o)} is met twice (a cycle)`
    this.claim(b, name, LUA_OBJECT, o)
    if (tt === L.tag.table) this.tableStorage(o)
    else if (name === 'lua:closure' && !L.upvalue.collectable && this.isLuaClosure(o, tt)) this.upvalues(o)
    else if (tt === L.tag.thread) this.threadStorage(o)
    else if (tt === L.tag.proto) this.protoStorage(o)
    return null
  }

  /** 5.3, 5.4: the tag says; 5.1: the isC byte (0 for a Lua closure). */
  private isLuaClosure(o: number, tt: number): boolean {
    return this.L.closure.isC === null ? tt === this.L.tag.luaClosure : this.heap.u8(o + this.L.closure.isC) === 0
  }

  private tableStorage(t: number): void {
    const {L, heap} = this
    const alimit = heap.u32(t + L.table.arraySize)
    const flags = heap.u8(t + L.table.flags)
    const array = heap.pointer(t + L.table.array)
    if (alimit !== undefined && flags !== undefined && array !== undefined && alimit > 0) {
      // luaH_realasize: with BITRAS (flags' top bit) set, alimit is a hint below the real size,
      // the next power of two
      let size = alimit
      if (L.table.realSizeBit !== null && flags >= L.table.realSizeBit) for (size = 1; size < alimit; ) size *= 2
      this.storage(array, size * L.table.tvalue, 'lua:table array', t)
    }
    const lastfree = heap.pointer(t + L.table.lastfree)
    const lsizenode = heap.u8(t + L.table.lsizenode)
    const node = heap.pointer(t + L.table.node)
    if (lastfree === undefined || lsizenode === undefined || lsizenode >= 40 || node === undefined) return
    // The shared static dummy node, in the library's data, is no heap block: 5.3 and 5.4 set
    // lastfree NULL for it; 5.1 does not, and its node pointer is outside the heap
    const dummy = L.table.dummy === 'lastfree' ? lastfree === 0 : lsizenode === 0 && this.ctx.objects.findObject(node) === undefined
    if (!dummy) this.storage(node, 2 ** lsizenode * L.table.nodeSize, 'lua:table nodes', t)
  }

  private threadStorage(th: number): void {
    const {L, heap} = this
    const stack = heap.pointer(th + L.state.stack)
    if (L.state.stackSize !== null) {
      const slots = heap.i32(th + L.state.stackSize)
      if (stack !== undefined && slots !== undefined && slots > 0) this.storage(stack, slots * L.stackValue, 'lua:stack', th)
    } else {
      const last = heap.pointer(th + L.state.stackLast)
      if (stack !== undefined && last !== undefined && last >= stack && (last - stack) % L.stackValue === 0) {
        this.storage(stack, last - stack + L.extraStack * L.stackValue, 'lua:stack', th)
      }
    }
    const ci = L.callInfo
    if (ci.kind === 'array') {
      const array = heap.pointer(th + L.state.baseCi)
      const count = heap.i32(th + ci.count)
      if (array !== undefined && array !== 0 && count !== undefined && count > 0) this.storage(array, count * ci.size, 'lua:callinfo', th)
    } else {
      let at = heap.pointer(th + L.state.baseCi + ci.next)
      for (let steps = 0; at !== undefined && at !== 0; steps++) {
        if (steps >= this.stepLimit || !this.storage(at, ci.size, 'lua:callinfo', th)) break
        at = heap.pointer(at + ci.next)
      }
    }
    // 5.1: open upvalues are on their thread's list only
    if (L.state.openUpval !== null) this.list('openupval', heap.pointer(th + L.state.openUpval))
  }

  /** 5.3: a Lua closure's upvalues, blocks of their own that closures share (a reference count). */
  private upvalues(cl: number): void {
    const {L, heap} = this
    const n = heap.u8(cl + L.closure.nupvalues) ?? 0
    for (let i = 0; i < n; i++) {
      const uv = heap.pointer(cl + L.closure.lUpvals + i * L.closure.upvalPointer)
      if (uv === undefined || uv === 0) continue
      const b = heap.block(uv, L.upvalue.size)
      if (b !== undefined && this.claimed[b.slot] === SHARED) continue
      if (b === undefined || this.claimed[b.slot] !== 0) {
        this.ctx.warn(`lua:upvalue at ${hex(uv)} (of ${hex(cl)}) is ${b === undefined ? `not a live block of ${L.upvalue.size} bytes` : 'claimed as something else'}: not named`, uv)
        continue
      }
      this.claim(b, 'lua:upvalue', LUA_OBJECT, uv, SHARED)
    }
  }

  private protoStorage(p: number): void {
    for (const [sizeField, pointerField, each, name] of this.L.proto.arrays) {
      const n = this.heap.i32(p + sizeField)
      const at = this.heap.pointer(p + pointerField)
      if (n !== undefined && n > 0 && at !== undefined && at !== 0) this.storage(at, n * each, name, p)
    }
  }

  /** Names a block an object owns; false (with a warning) when it is no live block of that size. */
  private storage(addr: number, needed: number, name: string, owner: number): boolean {
    const b = this.heap.block(addr, needed)
    if (b === undefined || this.claimed[b.slot] !== 0) {
      this.ctx.warn(`${name} at ${hex(addr)} (of ${hex(owner)}) is ${b === undefined ? `not a live block of ${needed} bytes` : 'claimed twice'}: not named`, addr)
      return false
    }
    this.claim(b, name, LUA_STORAGE, addr)
    return true
  }

  private claim(b: LuaBlock, name: string, kind: string, address: number, how = CLAIMED): void {
    this.claimed[b.slot] = how
    // A name of another kind given first (a vtable) is a conflict the names record: not counted here
    if (!this.ctx.names.assign(b.slot, name, kind, VIA_RUNTIME, address)) return
    const t = this.tally
    if (kind === LUA_OBJECT) {
      t.objects++
      t.objectBytes += b.size
      t.byName.set(name, (t.byName.get(name) ?? 0) + 1)
    } else {
      t.storage++
      t.storageBytes += b.size
    }
  }

  private stop(message: string, address: number): void {
    this.ctx.warn(`lua_State ${hex(this.state.mainthread)}: ${message}: the walk of that list stops`, address)
  }
}
