import type {ObjectRef} from '../../tcmalloc/heap-objects.js'
import type {Probe} from './probe.js'

/** libstdc++'s in-place capacity (15 chars + NUL): a longer string's buffer is on the heap. */
const LOCAL_CAPACITY = 15

/**
 * A libstdc++ `std::string` (C++11 ABI) at `owner`: {ptr, length, capacity | 16 local bytes}.
 * Its heap buffer is `ptr`, allocated for capacity + 1 bytes, with a NUL at ptr[length]. Proven
 * by: ptr is not the owner's own local buffer (owner + 16), 15 < capacity, length ≤ capacity,
 * capacity + 1 is a request that rounds to the block's size, and the first NUL of the buffer is
 * at ptr[length]. A std::string holding NUL bytes is left unnamed: the price of refusing stale
 * owners.
 *
 * A hand-written {char *buf; size_t len; size_t cap} that allocates cap + 1 and keeps its text
 * NUL-terminated has this shape too, and its block is a string buffer in all but the class name:
 * accepted. A vector's {begin, end, capacity end} cannot pass: its second word is an address, not
 * a length that fits the block.
 */
export function stringAt(p: Probe, owner: number, buffer: ObjectRef): boolean {
  if (buffer.start === owner + 16 || !p.holds(owner, owner + 32)) return false
  const length = p.word(owner + 8)
  const capacity = p.word(owner + 16)
  if (length === undefined || capacity === undefined) return false
  if (!(capacity > LOCAL_CAPACITY && length <= capacity && p.fits(capacity + 1, buffer))) return false
  // The text has no NUL before its end: a stale string (in a vector's spare capacity, a dead
  // stack slot) whose freed buffer now holds a shorter text fails here.
  const text = p.ctx.program.core.memory.readBytes(buffer.start, length + 1)
  if (!text || text[length] !== 0 || text.indexOf(0) !== length) return false
  p.name(buffer, 'std::string buffer')
  return true
}
