import type {NamingContext} from './recogniser.js'

/** Bytes read at once: a span's slots together, or one slot. */
export const SLOT_CHUNK = 1 << 20

/**
 * Calls visit(id, start, size, bytes, offset) for every live slot `want` accepts, with the slot's
 * bytes at bytes[offset, offset + size); all of `bytes` is what the core holds at start − offset
 * (the slot's span, or the slot alone), and is the same Buffer for all the slots of one read. A span's slots are read in one piece (one read for
 * thousands of small objects, not one each); a slot larger than SLOT_CHUNK goes to `large`
 * instead (or is skipped). Slots the core lacks bytes for are skipped.
 */
export function forEachSlotBytes(
  ctx: NamingContext,
  want: (id: number) => boolean,
  visit: (id: number, start: number, size: number, bytes: Buffer, offset: number) => void,
  large?: (id: number, start: number, size: number) => void,
): void {
  const {spans, state} = ctx.objects
  const memory = ctx.program.core.memory
  const chunk = Buffer.alloc(SLOT_CHUNK)
  for (let s = 0; s < spans.start.length; s++) {
    const size = spans.objectSize[s]!
    const count = spans.objectCount[s]!
    const first = spans.firstObject[s]!
    const base = spans.start[s]!
    const wanted = (k: number) => state[first + k] === ctx.live && want(first + k)
    if (size > SLOT_CHUNK) {
      for (let k = 0; k < count; k++) if (wanted(k)) large?.(first + k, base + k * size, size)
      continue
    }
    if (size * count <= SLOT_CHUNK) {
      let any = false
      for (let k = 0; k < count && !any; k++) any = wanted(k)
      if (!any || !memory.readInto(base, size * count, chunk)) continue
      const bytes = chunk.subarray(0, size * count)
      for (let k = 0; k < count; k++) if (wanted(k)) visit(first + k, base + k * size, size, bytes, k * size)
      continue
    }
    for (let k = 0; k < count; k++) {
      if (wanted(k) && memory.readInto(base + k * size, size, chunk)) visit(first + k, base + k * size, size, chunk.subarray(0, size), 0)
    }
  }
}
