/**
 * Lua's object layouts on x86-64, one per release line, as `offsetof`/`sizeof` give them for the
 * sources Debian bookworm builds (LUA_EXTRASPACE = sizeof(void *) in 5.3 and 5.4, 0 in 5.1):
 * lstate.h, lobject.h, lfunc.h, and lstate.c's LX (extra space, then the lua_State) and LG (an
 * LX, then the global_State). Other releases of a line are not checked against these numbers; a state whose
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
  state: {
    lG: number
    stackLast: number
    stack: number
    /** 5.3, 5.4: the CallInfo in the lua_State (more are a list from its `next`); 5.1: a pointer to the CallInfo array. */
    baseCi: number
    /** 5.1: the stack's slots (an int); null where stack_last − stack + EXTRA_STACK gives them. */
    stackSize: number | null
    /** 5.1: the thread's list of open upvalues, which are on no collector's list; null elsewhere. */
    openUpval: number | null
  }
  /** 5.3, 5.4: CallInfos linked by `next`, each a block; 5.1: one array of `count` (an int field of the lua_State) CallInfos. */
  callInfo: {kind: 'list'; next: number; size: number} | {kind: 'array'; count: number; size: number}
  /** The slots a stack holds beyond stack_last (EXTRA_STACK), and a stack slot's bytes. */
  extraStack: number
  stackValue: number
  global: {
    strtHash: number
    strtSize: number
    /** The collector's lists: [name, offset, circular] (5.1's tmudata points at the last of a ring). */
    lists: ReadonlyArray<readonly [string, number, boolean]>
    mainthread: number
    /** 5.1: the concatenation buffer (Mbuffer's buffer and buffsize); null elsewhere. */
    buffer: {pointer: number; size: number} | null
  }
  /** Strings: 5.3, 5.4 short ones' length is a byte (`shrlen`), long ones' a size_t (`lnglen`); 5.1 has one kind (shrlen null), its `len` a size_t. `hnext`: the string table's chain link (5.1: CommonHeader's next). */
  string: {shrlen: number | null; lnglen: number; hnext: number; contents: number}
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
    /** How the shared static dummy node is told: 5.3, 5.4 by lastfree NULL; 5.1 by a node outside the heap with lsizenode 0. */
    dummy: 'lastfree' | 'outside-heap'
  }
  /** `isC`: 5.1's byte that tells a C closure (both have one tag); null where the tags differ. */
  closure: {isC: number | null; nupvalues: number; lUpvals: number; cUpvalue: number; upvalPointer: number; tvalue: number}
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
  tag: {shortString: number; longString: number | null; table: number; luaClosure: number; cClosure: number; userdata: number; thread: number; upvalue: number | null; proto: number}
}

const COMMON = {next: 0, tt: 8, extraStack: 5, stackValue: 16} as const
const STRING = {shrlen: 11, lnglen: 16, hnext: 16, contents: 24} as const
const CLOSURE = {isC: null, nupvalues: 10, lUpvals: 32, cUpvalue: 32, upvalPointer: 8, tvalue: 16} as const
const LISTS = (allgc: number, finobj: number, tobefnz: number, fixedgc: number) =>
  [['allgc', allgc, false], ['finobj', finobj, false], ['tobefnz', tobefnz, false], ['fixedgc', fixedgc, false]] as const

export const LUA54: LuaLayout = {
  ...COMMON,
  version: '5.4',
  source: 'Lua 5.4.4 (Debian bookworm lua5.4 5.4.4-3+deb12u1)',
  extraSpace: 8,
  lx: 208,
  lg: 1624,
  globalInLg: 208,
  state: {lG: 24, stackLast: 40, stack: 48, baseCi: 96, stackSize: null, openUpval: null},
  callInfo: {kind: 'list', next: 24, size: 64},
  global: {strtHash: 48, strtSize: 60, lists: LISTS(112, 128, 176, 184), mainthread: 264, buffer: null},
  string: STRING,
  table: {flags: 10, lsizenode: 11, arraySize: 12, array: 16, node: 24, lastfree: 32, size: 56, tvalue: 16, nodeSize: 24, realSizeBit: 0x80, dummy: 'lastfree'},
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
  extraSpace: 8,
  lx: 216,
  lg: 1552,
  globalInLg: 216,
  state: {lG: 24, stackLast: 48, stack: 56, baseCi: 96, stackSize: null, openUpval: null},
  callInfo: {kind: 'list', next: 24, size: 72},
  global: {strtHash: 48, strtSize: 60, lists: LISTS(88, 104, 152, 160), mainthread: 200, buffer: null},
  string: STRING,
  table: {flags: 10, lsizenode: 11, arraySize: 12, array: 16, node: 24, lastfree: 32, size: 56, tvalue: 16, nodeSize: 32, realSizeBit: null, dummy: 'lastfree'},
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

export const LUA51: LuaLayout = {
  ...COMMON,
  version: '5.1',
  source: 'Lua 5.1.5 (Debian bookworm lua5.1 5.1.5-9)',
  // LUAI_EXTRASPACE is 0: a thread's block starts at its lua_State
  extraSpace: 0,
  lx: 184,
  lg: 616,
  globalInLg: 184,
  state: {lG: 32, stackLast: 56, stack: 64, baseCi: 80, stackSize: 88, openUpval: 152},
  callInfo: {kind: 'array', count: 92, size: 40},
  global: {strtHash: 0, strtSize: 12, lists: [['rootgc', 40, false], ['tmudata', 80, true]], mainthread: 176, buffer: {pointer: 88, size: 104}},
  string: {shrlen: null, lnglen: 16, hnext: 0, contents: 24},
  table: {flags: 10, lsizenode: 11, arraySize: 56, array: 24, node: 32, lastfree: 40, size: 64, tvalue: 16, nodeSize: 40, realSizeBit: null, dummy: 'outside-heap'},
  closure: {isC: 10, nupvalues: 11, lUpvals: 40, cUpvalue: 40, upvalPointer: 8, tvalue: 16},
  udata: {nuvalue: null, len: 32, uv: 40, uvalue: 16, memNoUserValues: 40},
  upvalue: {size: 40, collectable: true},
  proto: {
    size: 120,
    arrays: [
      [80, 24, 4, 'lua:proto code'],
      [76, 16, 16, 'lua:proto constants'],
      [88, 32, 8, 'lua:proto protos'],
      [84, 40, 4, 'lua:proto lineinfo'],
      [92, 48, 16, 'lua:proto locvars'],
      [72, 56, 8, 'lua:proto upvalues'],
    ],
  },
  // one tag for every string, one for both closures (isC tells them apart)
  tag: {shortString: 0x04, longString: null, table: 0x05, luaClosure: 0x06, cClosure: 0x06, userdata: 0x07, thread: 0x08, upvalue: 0x0a, proto: 0x09},
}

export const LUA_LAYOUTS: readonly LuaLayout[] = [LUA54, LUA53, LUA51]
