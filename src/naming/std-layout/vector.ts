import type {Block, Probe} from './probe.js'

/**
 * A `std::vector<T>` at `owner`: {begin, end, capacity end} (libstdc++ and libc++ alike), its
 * body the block at begin, allocated for capacity end − begin bytes. Proven by: begin ≤ end ≤
 * capacity end, and capacity end − begin a request that rounds to the block's size.
 *
 * What else has this shape: any {start, cursor, limit} growth buffer over one malloc'd block
 * (`std::basic_streambuf`'s get and put areas over a string's buffer, hand-written byte
 * buffers, that keep nothing else pointing into it right after), accepted as vector-like: the string tier runs first and a block it named is not
 * offered again. A `std::deque` iterator {cur, first, last, node} whose cur is its block's first
 * element reads as an empty vector of 512 bytes' capacity: ruled out by its fourth word, a
 * pointer into the deque's map whose word is the block itself (deques are tried first, too). A
 * `std::vector<bool>` {p, offset, p, offset, end} fails at once: its second word is a bit offset.
 * A stdio `FILE` {…, write base, write ptr, write end, buf base, buf end}, a streambuf's get area
 * followed by its put area, and libc++'s `__split_buffer` {first, begin, end, end of capacity} (a
 * deque's map) have a fourth word pointing into the same block or at its end: a vector's next
 * field rarely does (a neighbouring vector's begin is another block), so such a triple is refused.
 * Rarely is not never: two vectors side by side in a struct whose bodies TCMalloc carved one after
 * the other from a span (a 1-element `std::vector<char*>` and its `std::vector<uint32_t>` of
 * lengths, both 8 bytes) have the second's begin at the first's capacity end. That word is taken
 * as a neighbour's begin when the next three words are themselves a vector over the block that
 * starts there; a __split_buffer's end of capacity is followed by the deque's start and size
 * (small integers, below it), a FILE's buffer end by its save pointers (null or in the buffer).
 */
export function vectorAt(p: Probe, owner: number, body: Block): boolean {
  if (!p.holds(owner, owner + 24)) return false
  const end = p.word(owner + 8)
  const capacityEnd = p.word(owner + 16)
  if (end === undefined || capacityEnd === undefined) return false
  if (!(body.start <= end && end <= capacityEnd && p.fits(capacityEnd - body.start, body))) return false
  const next = p.word(owner + 24)
  if (next !== undefined && next % 8 === 0 && next !== 0 && p.word(next) === body.start) return false
  if (next !== undefined && next >= body.start && next <= capacityEnd && !(next === capacityEnd && neighbourVectorAt(p, owner + 24))) return false
  p.name(body, 'std::vector body')
  return true
}

/** Whether {begin, end, capacity end} at `at` could be a vector whose body is the live block at begin. */
function neighbourVectorAt(p: Probe, at: number): boolean {
  if (!p.holds(at, at + 24)) return false
  const begin = p.word(at)
  const end = p.word(at + 8)
  const capacityEnd = p.word(at + 16)
  const body = p.liveSlot(begin)
  if (body === undefined || end === undefined || capacityEnd === undefined) return false
  return body.start <= end && end <= capacityEnd && p.fits(capacityEnd - body.start, body)
}
