import {hex} from '../errors.js'
import type {OtherAllocatorHeap, OtherAllocatorInputs, OtherAllocatorPart} from '../heap/other-allocator.js'
import type {Program} from '../program/program.js'
import {binnedChunks, fastbinChunks, tcacheChunks} from './cached-chunks.js'
import {walkChunkChain} from './chunk-chain.js'
import {MALLOC_ALIGNMENT, NONCONTIGUOUS_BIT} from './layout.js'
import {findMainArena, type MainArena} from './main-arena.js'
import {findMallocPar, type MallocPar} from './malloc-par.js'
import {mmappedChunkCandidates} from './mmapped-chunks.js'

const ALLOCATOR = 'glibc malloc, main arena'

/**
 * glibc malloc's main arena, when the process used it beside the heap model's allocator: its sbrk
 * heap walked chunk by chunk from sbrk_base to the top chunk, the chunks split by what glibc keeps
 * them for (in use, in a thread's tcache, in a fastbin, free in the bins, the top chunk, the
 * tcaches' own structs), and the chunks it mapped on its own. Every figure is proven or left out
 * with a note: the heap only when the chain lands on the top chunk exactly (its free chunks the
 * ones the bins hold, or a note says they are not), a tcache only from a
 * thread's TLS word and its content, mmapped chunks only when they are as many and as large as
 * mp_ counts. Undefined when no main_arena is found (glibc's malloc never used, or another libc).
 */
export function glibcMainArenaHeap(program: Program, inputs: OtherAllocatorInputs): OtherAllocatorHeap | undefined {
  const arena = findMainArena(program)
  if (!arena) return undefined
  const notes: string[] = []
  const heap: OtherAllocatorHeap = {allocator: ALLOCATOR, foundAt: `main_arena at ${hex(arena.address)} (${arena.module}'s data, by its structure)`, ranges: [], parts: [], counters: [], notes}
  if (arena.next !== arena.address) notes.push('threads\' own arenas exist (main_arena\'s ring has more than one): their heaps are not walked, and stay in other anonymous mappings')
  if (arena.flags & NONCONTIGUOUS_BIT) {
    notes.push('the main arena is not contiguous (it fell back to mmap): not walked')
    return heap
  }
  const topEnd = arena.top + arena.topSize
  // glibc adds every byte it takes from the break to system_mem, so its heap began that far below top's end.
  const sbrkBase = topEnd - arena.systemMem
  const par = findMallocPar(program, arena.module, sbrkBase)
  const parts = sbrkHeapParts(program, inputs, arena, sbrkBase, par, heap)
  if (!par) notes.push('mp_ (malloc_par) is not found by its sbrk_base: chunks glibc mapped on its own are not looked for')
  else if (par.nMmaps > 0) {
    const mapped = mmappedChunkCandidates(program, inputs, {start: sbrkBase, end: topEnd})
    const bytes = mapped.reduce((n, m) => n + m.end - m.start, 0)
    heap.counters.push({property: 'mp_.mmapped_mem', bytes: par.mmappedMem})
    if (mapped.length === par.nMmaps && bytes === par.mmappedMem) {
      heap.ranges.push(...mapped)
      parts.push({part: 'mmapped chunks (each its own mapping, in use)', bytes, blocks: mapped.length})
    } else notes.push(`glibc counts ${par.nMmaps} chunks it mapped on its own, ${par.mmappedMem} bytes (mp_); toma finds ${mapped.length}, ${bytes} bytes: not split out, they stay in other anonymous mappings`)
  }
  heap.ranges.sort((a, b) => a.start - b.start)
  heap.parts = parts
  return heap
}

/**
 * The sbrk heap's chunks split by what glibc keeps them for, its range added to `heap`; none, with
 * a note, when the heap is not proven (a span of the heap model inside it, a chain of chunks that
 * does not land on the top chunk).
 */
function sbrkHeapParts(program: Program, inputs: OtherAllocatorInputs, arena: MainArena, sbrkBase: number, par: MallocPar | undefined, heap: OtherAllocatorHeap): OtherAllocatorPart[] {
  const memory = program.core.memory
  const notes = heap.notes
  const topEnd = arena.top + arena.topSize
  const first = Math.ceil(sbrkBase / MALLOC_ALIGNMENT) * MALLOC_ALIGNMENT
  for (let s = 0; s < inputs.spans.count; s++) {
    if (inputs.spans.start(s) < topEnd && inputs.spans.end(s) > sbrkBase) {
      // glibc counts in system_mem what another allocator took from the break between its own sbrk calls.
      notes.push(`its heap ${hex(sbrkBase)}-${hex(topEnd)} (sbrk_base to the top chunk's end) holds the heap model's span at ${hex(inputs.spans.start(s))}: something else moved the break between glibc's calls, its heap is in pieces, and it is not walked`)
      return []
    }
  }
  const chain = walkChunkChain(memory, first, arena.top)
  if ('failure' in chain) {
    notes.push(`its heap ${hex(sbrkBase)}-${hex(topEnd)} is not walked: ${chain.failure}`)
    return []
  }
  heap.ranges.push({start: sbrkBase, end: topEnd})
  heap.counters.push({property: 'main_arena.system_mem', bytes: arena.systemMem})

  const kind = new Uint8Array(chain.starts.length) // 0 in use, 1 tcache, 2 fastbin, 3 tcache struct, 4 free
  chain.inUse.forEach((u, k) => (kind[k] = u ? 0 : 4))
  // The free chunks by their neighbours' bits must be the ones the bins hold.
  const binned = binnedChunks(memory, chain, arena.address)
  const free = chain.inUse.filter(u => !u).length
  if ('failure' in binned) notes.push(`main_arena's bins are not followed (${binned.failure}): the free chunks are those glibc's in-use bits say`)
  else if (binned.size !== free) notes.push(`main_arena's bins hold ${binned.size} chunks, the in-use bits say ${free} are free: the free chunks are those the bits say`)
  const fast = fastbinChunks(memory, chain, arena.fastbins)
  if ('failure' in fast) notes.push(`main_arena's fastbins are not followed (${fast.failure}): their chunks are counted in use, as glibc marks them`)
  else for (const k of fast) kind[k] = 2
  let tcaches = 0
  const seen = new Set<number>()
  for (const tls of inputs.tls) {
    const bytes = memory.readBytes(tls.start, tls.end - tls.start)
    if (!bytes) continue
    for (let at = 0; at + 8 <= bytes.length; at += 8) {
      const word = Number(bytes.readBigUInt64LE(at))
      if (word < first || word >= arena.top || seen.has(word)) continue
      const t = tcacheChunks(memory, chain, word, par?.tcacheCount ?? 65535)
      if (!t) continue
      seen.add(word)
      tcaches++
      kind[t.structChunk] = 3
      for (const k of t.chunks) kind[k] = 1
    }
  }
  // A thread that never called glibc's malloc has no tcache; one that did and is not found keeps its chunks in use.
  if (tcaches < inputs.tls.length) notes.push(`${tcaches} tcache${tcaches === 1 ? '' : 's'} found from the TLS of ${inputs.tls.length} threads: chunks in any other thread's tcache are counted in use, as glibc marks them`)

  const sum = (want: number) => {
    let bytes = 0
    let blocks = 0
    kind.forEach((x, k) => {
      if (x === want) (bytes += chain.sizes[k]!), blocks++
    })
    return {bytes, blocks}
  }
  const parts: OtherAllocatorPart[] = [
    {part: 'in use', ...sum(0), note: tcaches === 0 ? 'with the chunks in threads\' tcaches, which glibc marks in use too' : undefined},
    {part: 'free in threads\' tcaches', ...sum(1)},
    {part: 'free in fastbins', ...sum(2)},
    {part: 'free in bins (unsorted, small, large)', ...sum(4)},
    {part: 'top chunk (free, at the heap\'s end)', bytes: arena.topSize, blocks: 1},
    {part: 'the threads\' tcache structs (glibc\'s own)', ...sum(3)},
  ]
  if (first > sbrkBase) parts.push({part: 'alignment before the first chunk', bytes: first - sbrkBase, blocks: 0})

  return parts
}
