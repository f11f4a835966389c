/**
 * Lua 5.4's object layout on x86-64, as `offsetof`/`sizeof` give it for the 5.4.4 sources Debian
 * bookworm builds (liblua5.4 5.4.4-3+deb12u1; upstream tag v5.4.4: lstate.h, lobject.h, lfunc.h,
 * lstate.c's LX and LG), compiled with LUA_EXTRASPACE = sizeof(void *). Other 5.4 releases are
 * not checked against these numbers; a state whose words do not agree is simply not found.
 */
export const LUA54 = {
  version: '5.4',
  /** LX: LUA_EXTRASPACE bytes, then the lua_State; LG: an LX, then the global_State. */
  extraSpace: 8,
  lx: 208,
  lg: 1624,
  globalInLg: 208,

  /** CommonHeader: `GCObject *next; lu_byte tt; lu_byte marked`. */
  next: 0,
  tt: 8,

  state: {lG: 24, stackLast: 40, stack: 48, baseCi: 96},
  callInfo: {next: 24, size: 64},
  /** The slots a stack holds beyond stack_last (EXTRA_STACK), and a StackValue's bytes. */
  extraStack: 5,
  stackValue: 16,

  global: {strtHash: 48, strtSize: 60, allgc: 112, finobj: 128, tobefnz: 176, fixedgc: 184, mainthread: 264},

  string: {shrlen: 11, lnglen: 16, hnext: 16, contents: 24},
  table: {flags: 10, lsizenode: 11, alimit: 12, array: 16, node: 24, lastfree: 32, size: 56, tvalue: 16, node_: 24},
  /** ltable.c: bit 7 of flags set when alimit is not the array's real size. */
  tableBitRas: 0x80,
  closure: {nupvalues: 10, lUpvals: 32, cUpvalue: 32, upvalPointer: 8, tvalue: 16},
  udata: {nuvalue: 10, len: 16, uv: 40, uvalue: 16, memNoUserValues: 32},
  upvalSize: 40,
  proto: {
    size: 128,
    /** Each array: [size field (int), pointer field, bytes per element, storage name]. */
    arrays: [
      [24, 64, 4, 'lua:proto code'],
      [20, 56, 16, 'lua:proto constants'],
      [32, 72, 8, 'lua:proto protos'],
      [16, 80, 16, 'lua:proto upvalues'],
      [28, 88, 1, 'lua:proto lineinfo'],
      [40, 96, 8, 'lua:proto abslineinfo'],
      [36, 104, 16, 'lua:proto locvars'],
    ] as ReadonlyArray<readonly [number, number, number, string]>,
  },

  /** Type tags with variant bits (lobject.h, makevariant), as CommonHeader's tt holds them. */
  tag: {shortString: 0x04, longString: 0x14, table: 0x05, luaClosure: 0x06, cClosure: 0x26, userdata: 0x07, thread: 0x08, upvalue: 0x09, proto: 0x0a},
} as const

export type Lua54Layout = typeof LUA54
