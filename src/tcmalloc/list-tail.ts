import type {AddressSpace} from '../core/address-space.js'
import {LIVE} from '../heap/states.js'
import type {StateMarker} from './state-marker.js'
import {u64le} from '../util/u64le.js'

/** Spans searched at most for a lost tail's objects. */
const MAX_SPANS = 1 << 16
/** Objects considered at most: past this the search gives up (its maps grow with them). */
const MAX_CANDIDATES = 1 << 20
/** A backward layer wider than this is ambiguous already: the search gives up. */
const MAX_LAYER = 1 << 12

/**
 * The objects behind a bad link that their own links still tell: a free list's tail is a chain of
 * free objects, each one's first word the next one's address, the last one's 0. Among the objects
 * of the list's class (its span, for a span's own list) that no list marked free, every chain of
 * exactly `count` objects that ends with 0 is a candidate, and the tail is one of them. A first
 * word names one successor, so chains that meet run on together: the objects every candidate
 * shares (their common end) are certainly the tail's, and are returned; the rest stay counted
 * live. Stale links in live objects (a fresh span's objects are carved linked in address order)
 * make more candidates, and fewer objects certain; never a wrong one.
 */
export function recoverTail(memory: AddressSpace, marker: StateMarker, sizeClass: number, span: number, count: number): number[] {
  if (count <= 0) return []
  const {spans, state} = marker
  const slots: number[] = []
  const first: number[] = []
  const at = new Map<number, number>()
  let searched = 0
  for (let s = span >= 0 ? span : 0; s < (span >= 0 ? span + 1 : spans.count) && searched < MAX_SPANS; s++) {
    if (spans.location[s] !== 0 || spans.sizeClass[s] !== sizeClass) continue
    searched++
    const size = spans.objectSize[s]!
    const n = spans.objectCount[s]!
    if (slots.length + n > MAX_CANDIDATES) return []
    const bytes = memory.readBytes(spans.start[s]!, n * size)
    if (!bytes) continue
    for (let k = 0; k < n; k++) {
      const slot = spans.firstObject[s]! + k
      if (state[slot] !== LIVE) continue
      at.set(spans.start[s]! + k * size, slots.length)
      slots.push(slot)
      first.push(u64le(bytes, k * size))
    }
  }
  // Who links to whom: pred[j] lists the candidates whose first word is candidate j's address.
  const pred: number[][] = slots.map(() => [])
  for (let i = 0; i < slots.length; i++) {
    const j = at.get(first[i]!)
    if (j !== undefined && j !== i) pred[j]!.push(i)
  }
  // The chains of exactly `count` ending at a candidate whose link is 0: their starts, layer by
  // layer back from each such end. Chains ending at two different objects share nothing certain.
  let starts: number[] = []
  for (let t = 0; t < slots.length; t++) {
    if (first[t] !== 0) continue
    let layer = [t]
    for (let d = 1; d < count && layer.length > 0; d++) {
      const next: number[] = []
      for (const x of layer) for (const p of pred[x]!) next.push(p)
      if (next.length > MAX_LAYER) return []
      layer = next
    }
    if (layer.length === 0) continue
    if (starts.length > 0) return []
    starts = layer
  }
  if (starts.length === 0) return []
  // Walk each candidate forward; keep the end they all share.
  const chains = starts.map(start => {
    const chain: number[] = []
    for (let i: number | undefined = start; i !== undefined && chain.length < count; i = at.get(first[i]!)) chain.push(i)
    return chain
  })
  let common = count
  while (common > 0 && chains.every(c => c[common - 1] === chains[0]![common - 1])) common--
  return chains[0]!.slice(common).map(i => slots[i]!)
}
