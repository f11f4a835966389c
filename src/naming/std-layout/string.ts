import {textLength} from '../c-string.js'
import type {Block, Probe} from './probe.js'

/** libstdc++'s in-place capacity (15 chars + NUL): a longer string's buffer is on the heap. */
const LOCAL_CAPACITY = 15
/** libc++'s in-place capacity (22 chars + NUL). */
const LIBCXX_LOCAL_CAPACITY = 22

/**
 * A libstdc++ `std::string` (C++11 ABI) at `owner`: {ptr, length, capacity | 16 local bytes}.
 * Its heap buffer is `ptr`, allocated for capacity + 1 bytes. Proven by: ptr is not the owner's
 * own local buffer (owner + 16), 15 < capacity, length ≤ capacity, capacity + 1 is a request that
 * rounds to the block's size, and the text fits (`textFits`).
 *
 * The words alone prove little: a hand-written {char *buf; size_t used; size_t cap} over a
 * `new char[N]` of binary bytes passes them whenever cap + 1 rounds to N's class and the first
 * zero byte happens to sit at `used` (fixtures/buffersdemo: three such buffers of 896 B and 4 KiB
 * were named so). The text is the rest of the proof (`textFits`). One that holds NUL-terminated
 * text is a string buffer in all but the class name: accepted. A vector's {begin, end, capacity
 * end} cannot pass: its second word is an address, not a length that fits the block.
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
 * stack slot) whose freed buffer now holds a shorter text fails; and its bytes read as text
 * (c-string's rule: printable ASCII and tab, newline, carriage return, a letter among them, not
 * one byte repeated). Binary bytes that happen to have their first zero at a count the owner
 * keeps beside the pointer are a raw buffer's as often as a string's: a std::string holding NUL
 * bytes, binary bytes or non-ASCII text is left unnamed (the DWARF tier names it by its type).
 */
function textFits(p: Probe, buffer: Block, length: number): boolean {
  const text = p.ctx.program.core.memory.readBytes(buffer.start, length + 1)
  return text !== undefined && text.indexOf(0) === length && textLength(text) === length
}
