/**
 * Runs `work` in a frame of its own and returns what it returns.
 *
 * Why: an interpreted frame's registers keep what they last held (for a garbage collection too)
 * until they are reused, so an array that a long-lived frame once held stays resident through the
 * next phase's peak. A frame that returns lets go of it. The store runs every phase this way
 * (array-store.ts). A pass that takes its input out of a holder the store lent it (the dominator
 * pass's edges) takes it in here, so that once the pass empties the holder, the next collection
 * frees the input. This is the one place that works around the registers; the rest of the code
 * calls it and does not copy the trick.
 */
export function inFrameOfItsOwn<T>(work: () => T): T {
  return work()
}
