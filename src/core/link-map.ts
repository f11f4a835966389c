import type {AddressSpace} from './address-space.js'

/** One loaded object as the dynamic loader lists it (glibc's `struct link_map`, its public head). */
export interface LinkMapEntry {
  /** l_addr: the object's load bias. */
  bias: number
  /**
   * l_name: its path as the loader opened it ("" for the executable); null when the string is not
   * in the core (ld.so's own name points into the executable's PT_INTERP, a page a QEMU core omits).
   */
  name: string | null
  /** Where l_name points. */
  nameAt: number
  /** l_ld: its dynamic section in the process. */
  dynamic: number
  /** Where the entry itself is. */
  at: number
}

const DT_NULL = 0
const DT_DEBUG = 21
/** A dynamic section longer than this is no executable's. */
const MAX_DYNAMIC_ENTRIES = 4096
/** Loaded objects: far beyond any process (a cycle or damage stops the walk before). */
const MAX_OBJECTS = 65536
const MAX_NAME = 4096

/**
 * The dynamic loader's list of loaded objects, from the executable's dynamic section in memory:
 * DT_DEBUG → `struct r_debug` (r_version, r_map) → `link_map` chain (l_addr, l_name, l_ld, l_next
 * at 0, 8, 16, 24 on every 64-bit glibc). What a debugger reads in a core without NT_FILE (a
 * QEMU-user core). Every read is checked, the walk bounded and cycle-checked; `problem` says where
 * the list could not be read (then `entries` holds what came before).
 */
export function readLinkMap(memory: AddressSpace, dynamic: number): {entries: LinkMapEntry[]; problem: string | null} {
  const hex = (n: number) => `0x${n.toString(16)}`
  let rDebug: number | undefined
  for (let i = 0; i < MAX_DYNAMIC_ENTRIES && rDebug === undefined; i++) {
    const tag = memory.readU64(dynamic + i * 16)
    const value = memory.readU64(dynamic + i * 16 + 8)
    if (tag === undefined || value === undefined) return {entries: [], problem: `the executable's dynamic section at ${hex(dynamic)} is not in the core`}
    if (tag === DT_NULL) break
    if (tag === DT_DEBUG) rDebug = value
  }
  if (rDebug === undefined) return {entries: [], problem: `the executable's dynamic section at ${hex(dynamic)} has no DT_DEBUG entry`}
  if (rDebug === 0) return {entries: [], problem: 'DT_DEBUG is 0: the dynamic loader had not set up r_debug'}
  const version = memory.readU32(rDebug)
  const first = memory.readU64(rDebug + 8)
  if (version === undefined || first === undefined) return {entries: [], problem: `r_debug at ${hex(rDebug)} is not in the core`}
  if (version < 1 || version > 2) return {entries: [], problem: `r_debug at ${hex(rDebug)} has version ${version}, not 1 or 2`}
  const entries: LinkMapEntry[] = []
  const seen = new Set<number>()
  for (let at = first; at !== 0; ) {
    if (seen.has(at)) return {entries, problem: `the link_map list loops back to ${hex(at)}`}
    if (entries.length >= MAX_OBJECTS) return {entries, problem: `the link_map list is longer than ${MAX_OBJECTS} objects`}
    seen.add(at)
    const bias = memory.readU64(at)
    const nameAt = memory.readU64(at + 8)
    const ld = memory.readU64(at + 16)
    const next = memory.readU64(at + 24)
    if (bias === undefined || nameAt === undefined || ld === undefined || next === undefined) return {entries, problem: `link_map entry at ${hex(at)} is not in the core`}
    const name = nameAt === 0 ? '' : (memory.readCString(nameAt, MAX_NAME) ?? null)
    entries.push({bias, name, nameAt, dynamic: ld, at})
    at = next
  }
  return {entries, problem: null}
}
