import type {SizeClassUse, SpanColumns} from './heap-model.js'
import type {SlotTable} from './slot-table.js'
import {LIVE} from './states.js'

/**
 * Live and free objects per size class of the in-use spans cut into classes (location 0, class
 * > 0), classes in first-seen order: the summary's table for any model, given each class's size.
 */
export function sizeClassUseOf(spans: SlotTable & Pick<SpanColumns, 'sizeClass' | 'location'>, state: Uint8Array, classSize: (sizeClass: number) => number): SizeClassUse[] {
  const live = new Float64Array(256)
  const free = new Float64Array(256)
  const seen: number[] = []
  // Span by span (every slot of the heap: no call a slot).
  for (let s = 0; s < spans.count; s++) {
    const cl = spans.sizeClass[s]!
    if (spans.location[s] !== 0 || cl === 0) continue
    const first = spans.firstObject[s]!
    const end = first + spans.objectCount[s]!
    let liveHere = 0
    for (let id = first; id < end; id++) if (state[id] === LIVE) liveHere++
    if (live[cl] === 0 && free[cl] === 0 && end > first) seen.push(cl)
    live[cl]! += liveHere
    free[cl]! += end - first - liveHere
  }
  return seen.map(cl => ({sizeClass: cl, size: classSize(cl), liveObjects: live[cl]!, liveBytes: live[cl]! * classSize(cl), freeObjects: free[cl]!}))
}
