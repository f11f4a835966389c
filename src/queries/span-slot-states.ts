import type {HeapIndex} from '../index/heap-index.js'
import {STATE_NAMES} from '../heap/states.js'

/** States a slot may have (states.ts): the stride of the counts, a span's counts at span × STATES. */
export const STATES = STATE_NAMES.length

const known = new WeakMap<HeapIndex, Uint32Array>()

/**
 * Each span's slots counted by state (states.ts order): `counts[s * STATES + state]`. One pass over
 * every slot's state byte, the only one `toma memory` makes (its bytes per state and each span's
 * occupancy both read these), made on first use and kept per index, which cannot change.
 */
export function spanSlotStates(index: HeapIndex): Uint32Array {
  let counts = known.get(index)
  if (counts) return counts
  const {spanFirstObject, spanObjectCount} = index
  const state = index.objects.state
  const spans = spanFirstObject.length
  counts = new Uint32Array(spans * STATES)
  // A slot is one increment, straight into its span's counts (30 M slots in some 60 ms).
  for (let s = 0; s < spans; s++) {
    const at = s * STATES
    const end = spanFirstObject[s]! + spanObjectCount[s]!
    for (let id = spanFirstObject[s]!; id < end; id++) counts[at + state[id]!]!++
  }
  // A state byte past the states would have counted in the next span's counts (or nowhere): each
  // span's counts must add up to its slots.
  for (let s = 0; s < spans; s++) {
    let sum = 0
    for (let k = 0; k < STATES; k++) sum += counts[s * STATES + k]!
    if (sum !== spanObjectCount[s]) throw new Error(`span ${s}: its slots' states are not all among the ${STATES} states (the index is damaged)`)
  }
  known.set(index, counts)
  return counts
}
