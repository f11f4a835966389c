import type {HeapObjects} from '../heap/objects.js'
import type {NamingResult} from '../naming/name-heap.js'
import {VIA_LABELS} from '../naming/via.js'
import {Warnings} from '../heap/warnings.js'
import {conflictLine} from '../naming/object-names.js'

/**
 * How much of the live heap carries a name, by the tier that gave it: the figure a user asks first
 * ("what is this memory?"), as objects and bytes per tier and the named share of live bytes.
 */
export function namingSummary(objects: HeapObjects, live: number, naming: NamingResult) {
  const {via} = naming.names
  const objectsBy = new Float64Array(VIA_LABELS.length)
  const bytesBy = new Float64Array(VIA_LABELS.length)
  let liveObjects = 0
  let liveBytes = 0
  // Span by span, with no call a slot: the summary runs in both stages, over every slot.
  const {firstObject, objectCount, objectSize} = objects.spans
  const state = objects.state
  for (let s = 0; s < firstObject.length; s++) {
    const size = objectSize[s]!
    for (let id = firstObject[s]!, end = id + objectCount[s]!; id < end; id++) {
      if (state[id] !== live) continue
      const v = via[id]! < VIA_LABELS.length ? via[id]! : 0
      objectsBy[v]++
      bytesBy[v] += size
      liveObjects++
      liveBytes += size
    }
  }
  const byVia = VIA_LABELS.flatMap((label, v) => (v === 0 || objectsBy[v] === 0 ? [] : [{via: label, objects: objectsBy[v]!, bytes: bytesBy[v]!}]))
  const namedBytes = liveBytes - bytesBy[0]!
  return {
    liveObjects,
    liveBytes,
    namedObjects: liveObjects - objectsBy[0]!,
    namedBytes,
    /** Named share of live bytes, 0 to 1 (0 for an empty heap). */
    namedShare: liveBytes > 0 ? namedBytes / liveBytes : 0,
    byVia,
    distinctNames: naming.names.names.length,
    conflicts: naming.names.conflictCount,
    notes: naming.notes,
  }
}

export type NamingSummary = ReturnType<typeof namingSummary>

/** The naming pass's inconsistencies and conflicts as warnings of the 'types' phase, with their addresses. */
export function namingWarnings(naming: NamingResult): Warnings {
  const w = new Warnings()
  for (const x of naming.warnings) w.add('types', x.message, ...(x.address ? [x.address] : []))
  for (const c of naming.names.conflicts) w.add('types', conflictLine(c), c.address)
  const unlisted = naming.names.conflictCount - naming.names.conflicts.length
  if (unlisted > 0) w.add('types', `${unlisted} more objects were given two names (kept the first)`)
  return w
}
