import {MAX_ELEMENTS, type Block, type Probe} from './probe.js'

/** libc++'s blocks hold 4096 / sizeof(T) elements (16 past 256 bytes): never fewer than this many bytes. */
const MIN_BLOCK = 4096 - 255

/**
 * A libc++ `std::deque` at `owner`: {map {first, begin, end, end of capacity} (a
 * `__split_buffer` of block pointers), start, size}. Proven by: first ≤ begin ≤ end ≤ end of
 * capacity, 8-aligned within one map block whose size end of capacity − first rounds to; at least
 * one block; every pointer from begin to end a live unnamed block of one size, each at least
 * 3,841 bytes (libc++'s block is 4096 / sizeof(T) elements, or 16 of them for larger T).
 *
 * A std::vector followed by a fourth pointer into the same body, whose unused capacity holds
 * pointers to blocks of 4 KiB or more, would pass: no such shape was met (fixtures: namesdemo,
 * demo, slabcache).
 */
export function libcxxDequeAt(p: Probe, owner: number, map: Block): boolean {
  if (!p.holds(owner, owner + 48)) return false
  const begin = p.word(owner + 8)
  const end = p.word(owner + 16)
  const capacityEnd = p.word(owner + 24)
  const size = p.word(owner + 40)
  if (begin === undefined || end === undefined || capacityEnd === undefined || size === undefined) return false
  if (!(map.start <= begin && begin < end && end <= capacityEnd && size <= MAX_ELEMENTS)) return false
  if ((begin - map.start) % 8 !== 0 || (end - map.start) % 8 !== 0 || !p.fits(capacityEnd - map.start, map)) return false
  const blocks: Block[] = []
  for (let at = begin; at < end; at += 8) {
    const b = p.block(p.word(at), 'std::deque block')
    if (!b || b.size < MIN_BLOCK || (blocks.length > 0 && b.size !== blocks[0]!.size)) return false
    blocks.push(b)
  }
  p.name(map, 'std::deque map')
  for (const b of blocks) p.name(b, 'std::deque block')
  return true
}
