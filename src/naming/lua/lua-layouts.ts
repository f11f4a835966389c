/**
 * Lua's object layouts on x86-64, one per release line, as `offsetof`/`sizeof` give them for the
 * sources Debian bookworm builds (compiled with LUA_EXTRASPACE = sizeof(void *)): lstate.h,
 * lobject.h, lfunc.h, and lstate.c's LX (extra space, then the lua_State) and LG (an LX, then the
 * global_State). Other releases of a line are not checked against these numbers; a state whose
 * words do not agree is simply not found.
 */
export interface LuaLayout {
  version: string
  /** Where the numbers come from. */
  source: string
  extraSpace: number
  lx: number
  lg: number
  globalInLg: number
  /** CommonHeader: `GCObject *next; lu_byte tt; lu_byte marked`. */
  next: number
  tt: number
  state: {lG: number; stackLast: number; stack: number; baseCi: number}
  callInfo: {next: number; size: number}
  /** The slots a stack holds beyond stack_last (EXTRA_STACK), and a stack slot's bytes. */
  extraStack: number
  stackValue: number
  global: {strtHash: number; strtSize: number; allgc: number; finobj: number; tobefnz: number; fixedgc: number; mainthread: number}
  string: {shrlen: number; lnglen: number; hnext: number; contents: number}
  table: {
    flags: number
    lsizenode: number
    /** 5.4's alimit, 5.3's sizearray (an unsigned int). */
    arraySize: number
    array: number
    node: number
    lastfree: number
    size: number
    tvalue: number
    nodeSize: number
    /** 5.4: flags at or above this (BITRAS, the top bit) say alimit is below the array's real size; 5.3: null. */
    realSizeBit: number | null
  }
  closure: {nupvalues: number; lUpvals: number; cUpvalue: number; upvalPointer: number; tvalue: number}
  /** A userdata's bytes: `nuvalue` null (5.3) means a fixed header of `memNoUserValues` bytes. */
  udata: {nuvalue: number | null; len: number; uv: number; uvalue: number; memNoUserValues: number}
  /** 5.4: a collectable object (on allgc); 5.3: a block of its own, reference-counted, reached from Lua closures. */
  upvalue: {size: number; collectable: boolean}
  proto: {
    size: number
    /** Each array: [size field (int), pointer field, bytes per element, storage name]. */
    arrays: ReadonlyArray<readonly [number, number, number, string]>
  }
  /** Type tags with variant bits, as CommonHeader's tt holds them (upvalue: null when not collectable). */
  tag: {shortString: number; longString: number; table: number; luaClosure: number; cClosure: number; userdata: number; thread: number; upvalue: number | null; proto: number}
}

const COMMON = {extraSpace: 8, next: 0, tt: 8, extraStack: 5, stackValue: 16} as const
const STRING = {shrlen: 11, lnglen: 16, hnext: 16, contents: 24} as const
const CLOSURE = {nupvalues: 10, lUpvals: 32, cUpvalue: 32, upvalPointer: 8, tvalue: 16} as const

export const LUA54: LuaLayout = {
  ...COMMON,
  version: '5.4',
  source: 'Lua 5.4.4 (Debian bookworm lua5.4 5.4.4-3+deb12u1)',
  lx: 208,
  lg: 1624,
  globalInLg: 208,
  state: {lG: 24, stackLast: 40, stack: 48, baseCi: 96},
  callInfo: {next: 24, size: 64},
  global: {strtHash: 48, strtSize: 60, allgc: 112, finobj: 128, tobefnz: 176, fixedgc: 184, mainthread: 264},
  string: STRING,
  table: {flags: 10, lsizenode: 11, arraySize: 12, array: 16, node: 24, lastfree: 32, size: 56, tvalue: 16, nodeSize: 24, realSizeBit: 0x80},
  closure: CLOSURE,
  udata: {nuvalue: 10, len: 16, uv: 40, uvalue: 16, memNoUserValues: 32},
  upvalue: {size: 40, collectable: true},
  proto: {
    size: 128,
    arrays: [
      [24, 64, 4, 'lua:proto code'],
      [20, 56, 16, 'lua:proto constants'],
      [32, 72, 8, 'lua:proto protos'],
      [16, 80, 16, 'lua:proto upvalues'],
      [28, 88, 1, 'lua:proto lineinfo'],
      [40, 96, 8, 'lua:proto abslineinfo'],
      [36, 104, 16, 'lua:proto locvars'],
    ],
  },
  tag: {shortString: 0x04, longString: 0x14, table: 0x05, luaClosure: 0x06, cClosure: 0x26, userdata: 0x07, thread: 0x08, upvalue: 0x09, proto: 0x0a},
}

export const LUA53: LuaLayout = {
  ...COMMON,
  version: '5.3',
  source: 'Lua 5.3.6 (Debian bookworm lua5.3 5.3.6-2)',
  lx: 216,
  lg: 1552,
  globalInLg: 216,
  state: {lG: 24, stackLast: 48, stack: 56, baseCi: 96},
  callInfo: {next: 24, size: 72},
  global: {strtHash: 48, strtSize: 60, allgc: 88, finobj: 104, tobefnz: 152, fixedgc: 160, mainthread: 200},
  string: STRING,
  table: {flags: 10, lsizenode: 11, arraySize: 12, array: 16, node: 24, lastfree: 32, size: 56, tvalue: 16, nodeSize: 32, realSizeBit: null},
  closure: CLOSURE,
  udata: {nuvalue: null, len: 24, uv: 40, uvalue: 16, memNoUserValues: 40},
  upvalue: {size: 32, collectable: false},
  proto: {
    size: 120,
    arrays: [
      [24, 56, 4, 'lua:proto code'],
      [20, 48, 16, 'lua:proto constants'],
      [32, 64, 8, 'lua:proto protos'],
      [28, 72, 4, 'lua:proto lineinfo'],
      [36, 80, 16, 'lua:proto locvars'],
      [16, 88, 16, 'lua:proto upvalues'],
    ],
  },
  tag: {shortString: 0x04, longString: 0x14, table: 0x05, luaClosure: 0x06, cClosure: 0x26, userdata: 0x07, thread: 0x08, upvalue: null, proto: 0x09},
}

export const LUA_LAYOUTS: readonly LuaLayout[] = [LUA54, LUA53]
