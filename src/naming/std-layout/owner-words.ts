import type {NamingContext} from '../recogniser.js'
import {forEachSlotBytes, SLOT_CHUNK} from '../slot-bytes.js'
import {provenByteBlocks} from '../byte-blocks.js'
import type {Probe} from './probe.js'
import type {RootRange} from '../../graph/roots.js'

/**
 * Calls visit(address, word, inObject) for every aligned word of every live object (but the blocks
 * the DWARF tier proved bytes: byte-blocks.ts) and every root range (stacks, globals, TLS, other mappings; only `roots` when given, and then no object) whose
 * value may start a heap block: 8-aligned and inside the heap's span range. Before each call the
 * probe knows the owner (the object or root range the word is in) and the bytes read around it.
 * The words themselves are untrusted.
 */
export function forEachOwnerWord(ctx: NamingContext, p: Probe, visit: (address: number, word: number, inObject: boolean) => void, roots?: readonly RootRange[]): void {
  const {objects} = ctx
  const spans = objects.spans
  let lo = Infinity
  let hi = 0
  for (let i = 0; i < spans.start.length; i++) {
    lo = Math.min(lo, spans.start[i]!)
    hi = Math.max(hi, spans.start[i]! + spans.pages[i]! * objects.pageSize)
  }
  if (!(lo < hi)) return
  const loHigh = Math.floor(lo / 0x1_0000_0000)
  const hiHigh = Math.floor((hi - 1) / 0x1_0000_0000)
  const memory = ctx.program.core.memory
  // The words of bytes[offset, offset + length), at `start`, whose owner is [ownerStart, ownerEnd).
  let viewOf: Buffer | null = null
  let inObject = true
  const words = (bytes: Buffer, offset: number, length: number, start: number, ownerStart: number, ownerEnd: number): void => {
    p.ownerStart = ownerStart
    p.ownerEnd = ownerEnd
    if (bytes !== viewOf) {
      p.useBytes(bytes, start - offset)
      viewOf = bytes
    }
    const view = p.words!
    const first = offset / 4
    const end = (offset + length) / 4
    for (let i = first; i + 2 <= end; i += 2) {
      // The upper half first, as the pointer scan does: most words that are no heap address
      // (counts, flags, text, zeros) fail on it before any arithmetic in doubles.
      const high = view[i + 1]!
      if (high < loHigh || high > hiHigh) continue
      const low = view[i]!
      if (low % 8 !== 0) continue
      const w = high * 0x1_0000_0000 + low
      if (w >= lo && w < hi) visit(start + (i - first) * 4, w, inObject)
    }
  }
  const chunk = Buffer.alloc(SLOT_CHUNK)
  // A range read in pieces, one owner throughout.
  const range = (start: number, end: number): void => {
    for (let at = start; at < end; at += SLOT_CHUNK) {
      const n = Math.min(SLOT_CHUNK, end - at)
      if (!memory.readInto(at, n, chunk)) continue
      viewOf = null
      words(chunk.subarray(0, n), 0, n, at, start, end)
    }
  }
  if (!roots) {
    const bytesOnly = provenByteBlocks(ctx.names)
    forEachSlotBytes(ctx, slot => !bytesOnly(slot), (_id, start, size, bytes, offset) => words(bytes, offset, size, start, start, start + size),
      (_id, start, size) => range(start, start + size))
  }
  inObject = false
  for (const r of roots ?? ctx.roots) range(Math.ceil(r.start / 8) * 8, r.end)
  p.useNoBytes()
}
