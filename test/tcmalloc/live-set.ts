import {LIVE} from '../../src/tcmalloc/object-states.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import type {TcmallocHeap} from '../../src/tcmalloc/heap.js'

/** Every live object of the model: start address → size. */
export function liveObjects(heap: TcmallocHeap): Map<number, number> {
  const live = new Map<number, number>()
  const s = heap.spans
  for (let i = 0; i < s.count; i++) {
    if (s.location[i] !== IN_USE) continue
    for (let k = 0; k < s.objectCount[i]!; k++) {
      if (heap.state[s.firstObject[i]! + k] === LIVE) live.set(s.start[i]! + k * s.objectSize[i]!, s.objectSize[i]!)
    }
  }
  return live
}
