import {PAGE_SPAN_STRIDE, SPAN_STRIDE, spanOf, type PointerLookup} from './live-lookup.js'

/** A gathered word points into no slot: outside every span, a page no span holds, or a span's tail waste. */
export const NO_SLOT = 0
/** It points into a live object. */
export const LIVE_SLOT = 1
/** It points into a slot that is not live. */
export const FREE_SLOT = 2

/**
 * Words a batch holds: 4096, 132 KiB of arrays, which stay in a core's own cache beside the
 * lines of the lookup tables that the batch's loads bring in.
 */
export const POINTER_BATCH = 4096

/**
 * Words of live objects whose value lies inside the spans' range, in the order the scan read them,
 * gathered so that their targets are looked up together (resolvePointers) rather than one by one
 * as the words are read.
 *
 * Why: whether a word is a pointer is a branch of the reading loop that the processor cannot
 * predict (heap words are pointers, counts and text in no order), and each wrong guess discards the
 * loads it had started past the branch. Resolved there, each target's lookup waited for memory
 * alone: the scan took 8.2 s at scale 24, of which 1.8 s without the lookups (about 100 ns an edge;
 * 245 ns at 135 M slots). The lookup loop has no such branch, so the loads of many words are in
 * flight at once.
 */
export class PointerBatch {
  length = 0
  /** The source of the last edge recorded from the batch (across batches: an object's words may span two); −1 before the first. */
  lastSource = -1
  /** The word's value. */
  readonly value: Float64Array
  /** Where the word is. */
  readonly address: Float64Array
  /** Its offset in its object. */
  readonly offset: Float64Array
  /** Its object's slot. */
  readonly source: Uint32Array
  /** After resolvePointers: what the value points into (NO_SLOT, LIVE_SLOT, FREE_SLOT), and which slot. */
  readonly kind: Uint8Array
  readonly target: Uint32Array

  /** `capacity`: words held at most (tests make it small, so that objects' words span batches). */
  constructor(readonly capacity = POINTER_BATCH) {
    // One allocation for the six arrays (33 bytes a word), the 8-byte ones first.
    const memory = new ArrayBuffer(capacity * 33)
    this.value = new Float64Array(memory, 0, capacity)
    this.address = new Float64Array(memory, 8 * capacity, capacity)
    this.offset = new Float64Array(memory, 16 * capacity, capacity)
    this.source = new Uint32Array(memory, 24 * capacity, capacity)
    this.target = new Uint32Array(memory, 28 * capacity, capacity)
    this.kind = new Uint8Array(memory, 32 * capacity, capacity)
  }
}

let threadBatch: PointerBatch | null = null

/**
 * An empty batch of `capacity` words: this thread's one batch of POINTER_BATCH words, reused from
 * scan to scan (a batch each of the scan's ranges, left to the garbage collector, stayed resident
 * under a memory limit: 20 MiB more at the peak at scale 24 under 512M), else a new one.
 */
export function emptyBatch(capacity = POINTER_BATCH): PointerBatch {
  if (capacity !== POINTER_BATCH) return new PointerBatch(capacity)
  threadBatch ??= new PointerBatch()
  threadBatch.length = 0
  threadBatch.lastSource = -1
  return threadBatch
}

const NO_SLOT_FOUND = -1

/**
 * Looks up every gathered word's target: its span by the page table (one read of pageSpans where
 * it exists, else leaves then spanInfo, else a binary search), its slot, and whether it is live.
 */
export function resolvePointers(batch: PointerBatch, t: PointerLookup): void {
  const {lo, invPage, chunkPages, root, leaves, pageSpans, spanInfo, liveBits} = t
  const {value, kind, target} = batch
  const byPage = root !== null && pageSpans.length > 0
  const pageSize = 1 / invPage
  const invChunk = 1 / chunkPages
  for (let i = 0; i < batch.length; i++) {
    const v = value[i]!
    let slot = NO_SLOT_FOUND
    if (byPage) {
      const page = Math.floor((v - lo) * invPage)
      const chunk = Math.floor(page * invChunk)
      const leaf = root[chunk]!
      if (leaf >= 0) {
        const at = (leaf * chunkPages + (page - chunk * chunkPages)) * PAGE_SPAN_STRIDE
        const size = pageSpans[at + 1]!
        if (size !== 0) {
          const k = Math.floor((v - (lo + pageSpans[at + 2]! * pageSize)) / size)
          // Past the span's last object: its tail waste.
          if (k < pageSpans[at + 3]!) slot = pageSpans[at]! + k
        }
      }
    } else {
      let s = -1
      if (root !== null) {
        const page = Math.floor((v - lo) * invPage)
        const chunk = Math.floor(page * invChunk)
        const leaf = root[chunk]!
        if (leaf >= 0) s = leaves[leaf * chunkPages + (page - chunk * chunkPages)]!
      } else s = spanOf(t, v)
      if (s >= 0 && v < spanInfo[s * SPAN_STRIDE + 1]!) {
        const info = s * SPAN_STRIDE
        slot = spanInfo[info + 3]! + Math.floor((v - spanInfo[info]!) / spanInfo[info + 2]!)
      }
    }
    if (slot === NO_SLOT_FOUND) {
      kind[i] = NO_SLOT
      continue
    }
    target[i] = slot
    kind[i] = (liveBits[slot >>> 5]! & (1 << (slot & 31))) !== 0 ? LIVE_SLOT : FREE_SLOT
  }
}
