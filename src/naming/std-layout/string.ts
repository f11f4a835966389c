import {textLength} from '../c-string.js'
import type {Block, Probe} from './probe.js'

/** libstdc++'s in-place capacity (15 chars + NUL): a longer string's buffer is on the heap. */
const LOCAL_CAPACITY = 15
/** libc++'s in-place capacity (22 chars + NUL). */
const LIBCXX_LOCAL_CAPACITY = 22
/** Below this length a string's text must also read as text (see `textFits`). */
const SHORT = 16

/**
 * A libstdc++ `std::string` (C++11 ABI) at `owner`: {ptr, length, capacity | 16 local bytes}.
 * Its heap buffer is `ptr`, allocated for capacity + 1 bytes. Proven by: ptr is not the owner's
 * own local buffer (owner + 16), 15 < capacity, length ≤ capacity, capacity + 1 is a request that
 * rounds to the block's size, and the text fits (`textFits`).
 *
 * A hand-written {char *buf; size_t len; size_t cap} that allocates cap + 1 and keeps its text
 * NUL-terminated has this shape too, and its block is a string buffer in all but the class name:
 * accepted. A vector's {begin, end, capacity end} cannot pass: its second word is an address, not
 * a length that fits the block.
 */
export function stringAt(p: Probe, owner: number, buffer: Block): boolean {
  if (buffer.start === owner + 16 || !p.holds(owner, owner + 32)) return false
  const length = p.word(owner + 8)
  const capacity = p.word(owner + 16)
  if (length === undefined || capacity === undefined) return false
  if (!(capacity > LOCAL_CAPACITY && length <= capacity && p.fits(capacity + 1, buffer))) return false
  if (!textFits(p, buffer, length)) return false
  p.name(buffer, 'std::string buffer')
  return true
}

/**
 * A libc++ `std::string` in long mode whose data pointer is at `at`: {capacity word, size, data}
 * at at − 16. The capacity word is the allocation's size with its low bit set (the long-mode flag
 * on little-endian targets); libc++ allocates a multiple of 16 bytes. Proven by: the flag, an
 * allocation of 16·k > 23 bytes that rounds to the block's size, size < allocation, and the text
 * fits (`textFits`).
 */
export function libcxxStringAt(p: Probe, at: number, buffer: Block): boolean {
  const owner = at - 16
  if (!p.holds(owner, owner + 24)) return false
  const capacityWord = p.word(owner)
  const length = p.word(owner + 8)
  if (capacityWord === undefined || length === undefined || capacityWord % 2 !== 1) return false
  const allocated = capacityWord - 1
  if (!(allocated % 16 === 0 && allocated > LIBCXX_LOCAL_CAPACITY + 1 && length < allocated && p.fits(allocated, buffer))) return false
  if (!textFits(p, buffer, length)) return false
  p.name(buffer, 'std::string buffer')
  return true
}

/**
 * The buffer's first NUL is at `length`, so a stale string (in a vector's spare capacity, a dead
 * stack slot) whose freed buffer now holds a shorter text fails; and a length below 16, too small
 * a proof alone (other words read as a length and a capacity: a tree node's colour, a key), needs
 * its bytes to read as text (c-string's rule). A std::string holding NUL bytes, or a short binary
 * one, is left unnamed.
 */
function textFits(p: Probe, buffer: Block, length: number): boolean {
  const text = p.ctx.program.core.memory.readBytes(buffer.start, length + 1)
  if (!text || text.indexOf(0) !== length) return false
  return length >= SHORT || textLength(text) === length
}
