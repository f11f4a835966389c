import type {AddressSpace} from '../../core/address-space.js'
import type {HeapObjects} from '../../heap/objects.js'
import type {LiveBlockSize} from './dict-blocks.js'
import type {Claim} from './owned-blocks.js'

/**
 * Python/pyarena.c: a PyArena (the parser's and compiler's AST memory) is {a_head, a_cur,
 * a_objects}, a_objects a list; its blocks are {ab_size, ab_offset, ab_next, ab_mem} headers with
 * ab_mem just past the header and at least DEFAULT_BLOCK_SIZE bytes after it. The arena of the
 * main script's AST lives as long as the script runs (pyrun_file frees it after run_mod).
 */
const ARENA_BYTES = 24
const BLOCK_HEADER_BYTES = 32
const DEFAULT_BLOCK_SIZE = 8192
/** Blocks walked per arena (a 1 GiB AST would be 131,072 blocks). */
const MAX_BLOCKS = 2 ** 17

/** The arena block at an address: its next block (0 at the end), or null when it is not one. */
function arenaBlock(memory: AddressSpace, blockSize: LiveBlockSize, b: number): number | null {
  const size = blockSize(b)
  if (size === null) return null
  const abSize = memory.readU64(b)
  const abOffset = memory.readU64(b + 8)
  const next = memory.readU64(b + 16)
  const mem = memory.readU64(b + 24)
  if (abSize === undefined || abOffset === undefined || next === undefined || mem !== b + BLOCK_HEADER_BYTES) return null
  if (abSize < DEFAULT_BLOCK_SIZE || BLOCK_HEADER_BYTES + abSize > size || abOffset > abSize) return null
  return next
}

/**
 * Claims every PyArena whose a_objects is a proven list (`isList`) and whose blocks, from a_head
 * along ab_next, are all arena blocks in live blocks of their own, a_cur among them:
 * `python:arena` and `python:arena block`.
 */
export function arenas(memory: AddressSpace, objects: HeapObjects, live: number, blockSize: LiveBlockSize, isList: (address: number) => boolean, claim: Claim): void {
  objects.forEachObject((_slot, start, size) => {
    if (size < ARENA_BYTES || size > 2 * BLOCK_HEADER_BYTES) return
    const list = memory.readU64(start + 16)
    if (list === undefined || !isList(list)) return
    const head = memory.readU64(start)
    const cur = memory.readU64(start + 8)
    if (!head || !cur) return
    const blocks: number[] = []
    let sawCur = false
    for (let b = head; b !== 0; ) {
      if (blocks.length >= MAX_BLOCKS) return
      const next = arenaBlock(memory, blockSize, b)
      if (next === null) return
      blocks.push(b)
      if (b === cur) sawCur = true
      b = next
    }
    if (!sawCur) return
    claim(start, 'python:arena')
    for (const b of blocks) claim(b, 'python:arena block')
  }, live)
}
