import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {ChunkChain} from './chunk-chain.js'
import {ARENA, binChunkSize, CHUNK_HEADER, TCACHE} from './layout.js'

/**
 * A singly linked list's next pointer as glibc stores it: since 2.32 mangled with the address it
 * lies at (safe-linking, PROTECT_PTR: (pos >> 12) ^ ptr), before that plain. Both as BigInt: the
 * XOR is on 64-bit words.
 */
export function revealed(stored: number, pos: number, mangled: boolean): number {
  return mangled ? Number(BigInt(stored) ^ (BigInt(pos) >> 12n)) : stored
}

/**
 * The chunks of one bin's list, first at `head` (a chunk start), each of `size` bytes, one of the
 * chain's chunks that glibc marks in use, at most `limit` of them. The link lies at chunk + 16 and
 * points at the next chunk (a fastbin's fd) or at its user address (a tcache entry's next). A
 * failure names the first chunk that breaks the list.
 */
function listChunks(memory: AddressSpace, chain: ChunkChain, head: number, size: number, linksToUser: boolean, limit: number, mangled: boolean): number[] | {failure: string} {
  const out: number[] = []
  for (let p = head; p !== 0; ) {
    if (out.length >= limit) return {failure: `more than ${limit} chunks`}
    const k = chain.at.get(p)
    if (k === undefined) return {failure: `${hex(p)} is no chunk of the main arena`}
    if (chain.sizes[k] !== size || !chain.inUse[k]) return {failure: `the chunk at ${hex(p)} is ${chain.inUse[k] ? `of ${chain.sizes[k]} bytes, not ${size}` : 'free by its neighbour\'s bit'}`}
    out.push(k)
    const link = p + CHUNK_HEADER
    const stored = memory.readU64(link)
    if (stored === undefined) return {failure: `the link at ${hex(link)} is not in the core`}
    const next = revealed(stored, link, mangled)
    p = next === 0 ? 0 : linksToUser ? next - CHUNK_HEADER : next
  }
  return out
}

/** The chunks in main_arena's fastbins (bin i: chunks of 32 + 16 i bytes, linked at fd, chunk + 16), or why not. */
export function fastbinChunks(memory: AddressSpace, chain: ChunkChain, fastbins: number[]): number[] | {failure: string} {
  const out: number[] = []
  for (const mangled of [true, false]) {
    out.length = 0
    let failure: string | undefined
    for (let i = 0; i < fastbins.length && failure === undefined; i++) {
      if (fastbins[i] === 0) continue
      const list = listChunks(memory, chain, fastbins[i]!, binChunkSize(i), false, chain.starts.length, mangled)
      if ('failure' in list) failure = `fastbin ${i}: ${list.failure}`
      else out.push(...list)
    }
    if (failure === undefined) return out
    if (!mangled) return {failure}
  }
  return {failure: 'unreachable'}
}

/**
 * One thread's tcache (tcache_perthread_struct) at the user address `at`, proven by its content:
 * its chunk is one of the chain's, in use, of the struct's size; every bin's count is at most
 * `maxCount`, and its list (entries[i], user addresses, next at the entry's first word) holds
 * exactly that many chunks of the bin's size that glibc marks in use, then ends; a bin with no
 * count has no entry; and every entry carries the same key (tcache_key, the word after next).
 * Its chunks, or undefined when `at` is not one.
 */
export function tcacheChunks(memory: AddressSpace, chain: ChunkChain, at: number, maxCount: number): {structChunk: number; chunks: number[]} | undefined {
  const structChunk = chain.at.get(at - CHUNK_HEADER)
  if (structChunk === undefined || chain.sizes[structChunk] !== TCACHE.chunkSize || !chain.inUse[structChunk]) return undefined
  const bytes = memory.readBytes(at, TCACHE.entries + 8 * TCACHE.bins)
  if (!bytes) return undefined
  for (const mangled of [true, false]) {
    const chunks: number[] = []
    const keys = new Set<number>()
    let ok = true
    for (let i = 0; i < TCACHE.bins && ok; i++) {
      const count = bytes.readUInt16LE(TCACHE.counts + 2 * i)
      const entry = Number(bytes.readBigUInt64LE(TCACHE.entries + 8 * i))
      if (count > maxCount || (count === 0) !== (entry === 0)) ok = false
      else if (count > 0) {
        // Entries are user addresses (chunk + 16): the list's links are at the chunk's fd, chunk + 16.
        const list = listChunks(memory, chain, entry - CHUNK_HEADER, binChunkSize(i), true, count, mangled)
        if ('failure' in list || list.length !== count) ok = false
        else {
          chunks.push(...list)
          for (const k of list) keys.add(memory.readU64(chain.starts[k]! + CHUNK_HEADER + 8) ?? -1)
        }
      }
    }
    if (ok && keys.size <= 1 && !keys.has(-1)) return {structChunk, chunks}
  }
  return undefined
}

/**
 * The free chunks main_arena's bins hold (the unsorted, small and large bins: doubly linked rings
 * from each bin's own pair, `arena + 112 + 16 i`, taken as a chunk 16 bytes lower as glibc's bin_at
 * does, fd at +16), each one of the chain's chunks that glibc marks free, each bin's ring bounded
 * by the chain's chunks; or why not.
 */
export function binnedChunks(memory: AddressSpace, chain: ChunkChain, arena: number): Set<number> | {failure: string} {
  const out = new Set<number>()
  for (let i = 0; i < ARENA.binPairs; i++) {
    const bin = arena + ARENA.bins + 16 * i - CHUNK_HEADER
    let p = memory.readU64(bin + CHUNK_HEADER)
    for (let steps = 0; p !== bin; steps++) {
      if (p === undefined) return {failure: `bin ${i}'s list leaves the core`}
      if (steps > chain.starts.length) return {failure: `bin ${i}'s list does not come back to its bin`}
      const k = chain.at.get(p)
      if (k === undefined || chain.inUse[k] || out.has(k)) return {failure: `bin ${i} holds ${hex(p)}, ${k === undefined ? 'no chunk of the main arena' : chain.inUse[k] ? 'a chunk in use by its neighbour\'s bit' : 'twice'}`}
      out.add(k)
      p = memory.readU64(p + CHUNK_HEADER)
    }
  }
  return out
}
