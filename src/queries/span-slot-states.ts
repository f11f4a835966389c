import type {HeapIndex} from '../index/heap-index.js'
import {STATE_NAMES} from '../heap/states.js'
import {DamagedIndexError} from '../index/index-file.js'

/** States a slot may have (states.ts): the stride of the counts, a span's counts at span × STATES. */
export const STATES = STATE_NAMES.length

/**
 * Each span's slots counted by state (states.ts order): `counts[s * STATES + state]`, one pass over
 * every slot's state byte (some 60 ms at 30 M slots). Analyze counts them once into the index
 * (span.slotStates); a state byte past the states is refused, not counted in another span.
 */
export function countSpanSlotStates(firstObject: ArrayLike<number>, objectCount: ArrayLike<number>, state: Uint8Array): Uint32Array {
  const spans = firstObject.length
  const counts = new Uint32Array(spans * STATES)
  // A slot is one increment, straight into its span's counts.
  for (let s = 0; s < spans; s++) {
    const at = s * STATES
    const end = firstObject[s]! + objectCount[s]!
    for (let id = firstObject[s]!; id < end; id++) counts[at + state[id]!]!++
  }
  // A state byte past the states would have counted in the next span's counts (or nowhere): each
  // span's counts must add up to its slots.
  const problem = spanSlotStatesProblem(counts, objectCount)
  if (problem) throw new Error(problem)
  return counts
}

/** Why the counts do not add up to each span's slots (a state past the states, or counts of another table), or null. */
function spanSlotStatesProblem(counts: Uint32Array, objectCount: ArrayLike<number>): string | null {
  if (counts.length !== objectCount.length * STATES) return `${counts.length} slot-state counts for ${objectCount.length} spans`
  for (let s = 0; s < objectCount.length; s++) {
    let sum = 0
    for (let k = 0; k < STATES; k++) sum += counts[s * STATES + k]!
    if (sum !== objectCount[s]) return `span ${s}: its slots' states are not all among the ${STATES} states`
  }
  return null
}

const known = new WeakMap<HeapIndex, Uint32Array>()

/**
 * Each span's slots by state, as `toma memory` reads them (its bytes per state and each span's
 * occupancy): the index's span.slotStates, checked; from an index made before analyze kept them,
 * counted from the slots' states on first use. Kept per index, which cannot change.
 */
export function spanSlotStates(index: HeapIndex): Uint32Array {
  let counts = known.get(index)
  if (counts) return counts
  const stored = index.spanSlotStates()
  // Read from a file that may have been damaged since: refused as every damaged array is, naming the index.
  const problem = stored && spanSlotStatesProblem(stored, index.spanObjectCount)
  if (problem) throw new DamagedIndexError(index.path, `span.slotStates: ${problem}`)
  counts = stored ?? countSpanSlotStates(index.spanFirstObject, index.spanObjectCount, index.objects.state)
  known.set(index, counts)
  return counts
}
