import type {NamingContext} from '../recogniser.js'

/** Bytes read at once from a root range. */
const CHUNK = 1 << 16

/**
 * Calls visit(address, word, ownerStart, ownerEnd) for every aligned word of every live object
 * and every root range (stacks, globals, TLS, other mappings) whose value may start a heap block:
 * 8-aligned and inside the heap's span range. [ownerStart, ownerEnd) is the object or root range
 * the word is in. Each owner is read once, in pieces; the words themselves are untrusted.
 */
export function forEachOwnerWord(ctx: NamingContext, visit: (address: number, word: number, ownerStart: number, ownerEnd: number) => void): void {
  const {objects} = ctx
  const spans = objects.spans
  let lo = Infinity
  let hi = 0
  for (let i = 0; i < spans.start.length; i++) {
    lo = Math.min(lo, spans.start[i]!)
    hi = Math.max(hi, spans.start[i]! + spans.pages[i]! * objects.pageSize)
  }
  if (!(lo < hi)) return
  const memory = ctx.program.core.memory
  const buf = Buffer.alloc(CHUNK)
  const scan = (start: number, end: number): void => {
    for (let at = start; at < end; at += CHUNK) {
      const n = Math.min(CHUNK, end - at)
      if (!memory.readInto(at, n, buf)) continue
      for (let off = 0; off + 8 <= n; off += 8) {
        const low = buf.readUInt32LE(off)
        if (low % 8 !== 0) continue
        const w = buf.readUInt32LE(off + 4) * 0x1_0000_0000 + low
        if (w >= lo && w < hi) visit(at + off, w, start, end)
      }
    }
  }
  objects.forEachObject((_id, start, size) => scan(start, start + size), ctx.live)
  for (const r of ctx.roots) scan(Math.ceil(r.start / 8) * 8, r.end)
}
