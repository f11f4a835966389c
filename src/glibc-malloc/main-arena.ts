import {PF_W} from '../core/core-header.js'
import type {Program} from '../program/program.js'
import {u64le} from '../util/u64le.js'
import {ARENA, MALLOC_ALIGNMENT} from './layout.js'

/** glibc's main_arena as found in a module's data, with the fields this model reads. */
export interface MainArena {
  address: number
  /** The module whose data holds it (libc.so.6 in every build seen). */
  module: string
  top: number
  topSize: number
  systemMem: number
  flags: number
  /** The next arena of the ring: main_arena itself when no thread made an arena of its own. */
  next: number
  fastbins: number[]
}

const PAGE = 4096

/**
 * main_arena by structure, not by symbol (libc's .symtab is rarely at hand): in the modules'
 * writable data, a malloc_state whose every bin is either empty (fd and bk both point at the bin's
 * own pair, less 16: glibc's bin_at) or holds two chunk pointers, with at least one empty bin,
 * whose ring of arenas leads back to it (next, itself when there is one arena), and whose top
 * chunk's size is a multiple of 16 that ends the arena on a page boundary. Arenas that threads
 * made live in their own mappings, not in module data, so the main one is the only one found.
 * Undefined when no module holds one (glibc's malloc never initialised, or another libc).
 */
export function findMainArena(program: Program): MainArena | undefined {
  const memory = program.core.memory
  for (const seg of memory.segments) {
    if (!(seg.flags & PF_W) || seg.presentSize < ARENA.size) continue
    const module = program.core.moduleAt(seg.start)
    if (!module) continue
    const bytes = memory.readBytes(seg.start, seg.presentSize)
    if (!bytes) continue
    for (let at = 0; at + ARENA.size <= bytes.length; at += 8) {
      const address = seg.start + at
      // The cheap test first: the last bin is empty in nearly every heap, else the ring points home.
      const lastBin = ARENA.bins + 16 * (ARENA.binPairs - 1)
      if (u64le(bytes, at + lastBin) !== address + lastBin - 16 && u64le(bytes, at + ARENA.next) !== address) continue
      const arena = arenaAt(program, bytes, at, address, module.path.split('/').pop()!)
      if (arena) return arena
    }
  }
  return undefined
}

function arenaAt(program: Program, bytes: Buffer, at: number, address: number, module: string): MainArena | undefined {
  let empty = 0
  for (let i = 0; i < ARENA.binPairs; i++) {
    const pair = ARENA.bins + 16 * i
    const fd = u64le(bytes, at + pair)
    const bk = u64le(bytes, at + pair + 8)
    const self = address + pair - 16
    if (fd === self && bk === self) empty++
    else if (fd === self || bk === self || fd === 0 || bk === 0 || fd % MALLOC_ALIGNMENT !== 0 || bk % MALLOC_ALIGNMENT !== 0) return undefined
  }
  if (empty === 0) return undefined
  const top = u64le(bytes, at + ARENA.top)
  const systemMem = u64le(bytes, at + ARENA.systemMem)
  if (top === 0 || top % MALLOC_ALIGNMENT !== 0 || systemMem === 0) return undefined
  const head = program.core.memory.readU64(top + 8)
  if (head === undefined) return undefined
  const topSize = head - (head % 8)
  if (topSize % MALLOC_ALIGNMENT !== 0 || (top + topSize) % PAGE !== 0) return undefined
  const next = u64le(bytes, at + ARENA.next)
  if (!ringReturns(program, address, next)) return undefined
  const fastbins = Array.from({length: ARENA.fastbinCount}, (_, i) => u64le(bytes, at + ARENA.fastbins + 8 * i))
  return {address, module, top, topSize, systemMem, flags: bytes.readUInt32LE(at + ARENA.flags), next, fastbins}
}

/** Whether the arenas' ring (each malloc_state's next) leads back to the main arena within 1024 arenas. */
function ringReturns(program: Program, home: number, next: number): boolean {
  let at = next
  for (let hops = 0; hops < 1024; hops++) {
    if (at === home) return true
    if (at === 0 || at % 8 !== 0) return false
    const n = program.core.memory.readU64(at + ARENA.next)
    if (n === undefined) return false
    at = n
  }
  return false
}
