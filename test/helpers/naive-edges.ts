import {objectAt} from '../../src/heap/objects.js'
import type {HeapModel} from '../../src/heap/heap-model.js'
import {LIVE} from '../../src/heap/states.js'
import type {Program} from '../../src/program/program.js'

/** Every edge as `from+offset->to+toOffset`, found the slow way: each aligned word of each live object looked up with objectAt. */
export function naiveEdges(program: Program, heap: HeapModel): string[] {
  const out: string[] = []
  const s = heap.spans
  for (let i = 0; i < s.count; i++) {
    for (let k = 0; k < s.objectCount[i]!; k++) {
      const slot = s.firstObject[i]! + k
      if (heap.state[slot] !== LIVE) continue
      const start = s.start[i]! + k * s.objectSize[i]!
      for (let off = 0; off + 8 <= s.objectSize[i]!; off += 8) {
        const v = program.core.memory.readU64(start + off)!
        const t = objectAt(heap, v)
        if (t && heap.state[t.index] === LIVE) out.push(`${slot}+${off}->${t.index}+${v - t.start}`)
      }
    }
  }
  return out
}
