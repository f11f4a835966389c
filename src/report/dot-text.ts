import {grouped} from '../util/grouped.js'
import {printable} from '../util/printable.js'

/**
 * Bytes of a quoted DOT string at most. Graphviz's scanner refuses a longer one and with it the
 * whole file (2.43: "syntax error … scanning a quoted string (missing endquote? longer than
 * 16384?)", from a run of 16,382 bytes between quotes); a C++ template's type name can be longer,
 * and so can the offsets of a slab page's thousands of pointers into itself. What is cut says so.
 */
export const DOT_STRING_BYTES = 16_000

/**
 * A quoted DOT string of one or more lines (DOT's own `\n` between them): every line made
 * printable (no newline, quote or control character from a core's names can end the string or
 * the line), backslashes and quotes escaped, and the whole cut to DOT_STRING_BYTES.
 */
export function dotString(text: string | readonly string[]): string {
  const lines = typeof text === 'string' ? [text] : text
  const escaped = lines.map(l => printable(l).replace(/\\/g, '\\\\').replace(/"/g, '\\"')).join('\\n')
  return `"${cutToBytes(escaped, DOT_STRING_BYTES)}"`
}

/** Text for a `//` comment: printable, so a newline in it (a core's file name) cannot end the comment and start a statement. */
export function dotComment(text: string): string {
  return `// ${printable(text)}`
}

/**
 * Escaped text cut, when longer than `max` bytes of UTF-8, at a character boundary and never in
 * the middle of an escape, with how long it was. The result is at most `max` bytes.
 */
function cutToBytes(escaped: string, max: number): string {
  if (escaped.length <= max / 3 || Buffer.byteLength(escaped) <= max) return escaped
  const note = ` … [cut: ${grouped(escaped.length)} characters]`
  const budget = max - Buffer.byteLength(note)
  let bytes = 0
  let end = 0
  while (end < escaped.length) {
    const c = escaped.charCodeAt(end)
    const pair = c >= 0xd800 && c <= 0xdbff && end + 1 < escaped.length
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3
    if (bytes + size > budget) break
    bytes += size
    end += pair ? 2 : 1
  }
  // Every backslash of the escaped text begins a pair (\\, \", \n): an odd run at the end lost its partner.
  let slashes = 0
  while (slashes < end && escaped.charCodeAt(end - 1 - slashes) === 0x5c) slashes++
  if (slashes % 2 === 1) end--
  return escaped.slice(0, end) + note
}
