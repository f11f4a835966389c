import type {NamingContext, Recogniser} from './recogniser.js'
import {VIA_CONTENT} from './via.js'
import {forEachSlotBytes} from './slot-bytes.js'

/** Shortest text taken as a C string: below it, small integers and flags read as text too often. */
const MIN_LENGTH = 4
/** Largest block tested (a longer C string is rare; its block is left to other tiers). */
const MAX_BLOCK = 1 << 16

/**
 * C strings by their content: a live unnamed block whose bytes up to the first NUL are text
 * (printable ASCII, tab, newline, carriage return; at least MIN_LENGTH of them, one a letter) and
 * whose length + 1 is a request that rounds to the block's size: what `strdup` or
 * `malloc(strlen(s) + 1)` leaves. A block allocated larger than its text (a fixed 256-byte
 * buffer holding a short line) fails the size test and stays unnamed: a struct that starts with a
 * short char array would look the same. Runs last: std::string buffers, which are also text with
 * a NUL, are named by their owners first.
 */
export const cString: Recogniser = {
  label: 'c-string',
  via: VIA_CONTENT,
  applies: () => true,
  run(ctx) {
    const typeOf = ctx.names.typeOf
    let named = 0
    let bytes = 0
    forEachSlotBytes(ctx, id => typeOf[id] === 0, (id, start, size, buf, offset) => {
      if (size > MAX_BLOCK) return
      // No view of the slot (a Buffer object per slot cost a third of the tier on the bench core).
      if (!readsAsCString(ctx, buf, offset, size)) return
      ctx.names.assign(id, 'C string', 'C string', VIA_CONTENT, start)
      named++
      bytes += size
    })
    ctx.note(`${named} blocks (${bytes} bytes) named as C strings by their content`)
  },
}

/** Whether the block's bytes (buf[offset, offset + size)) are what this tier names a C string. */
export function readsAsCString(ctx: Pick<NamingContext, 'fits'>, buf: Uint8Array, offset: number, size: number): boolean {
  const length = textLength(buf, offset, offset + size)
  return length >= MIN_LENGTH && ctx.fits(length + 1, size)
}

/**
 * The length of the text before the first NUL in buf[start, end), or −1 when it is not all text, has
 * no NUL, or is one character repeated: a buffer memset with one printable byte ('L' × 200) reads as
 * text, and its NUL is often only the block's zero slack past the request.
 */
export function textLength(buf: Uint8Array, start = 0, end = buf.length): number {
  let letters = 0
  let varied = false
  const first = buf[start]
  for (let i = start; i < end; i++) {
    const c = buf[i]!
    if (c === 0) return letters > 0 && varied ? i - start : -1
    if (c !== first) varied = true
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) letters++
    else if (!((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d)) return -1
  }
  return -1
}
