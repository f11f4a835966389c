import type {AddressSpace} from '../../src/core/address-space.js'
import type {HeapGraph} from '../../src/graph/csr.js'
import {EdgeWords} from '../../src/graph/edge-words.js'
import type {HeapModel} from '../../src/heap/heap-model.js'
import {heapObjects} from '../../src/heap/objects.js'

/**
 * Every edge's pointer offset and target offset, found again in the core's bytes from each
 * object's start as queries find them (edge-words.ts); throws where an object does not hold its
 * edges' pointers.
 */
export function edgeOffsetsOf(memory: AddressSpace, heap: HeapModel, g: HeapGraph): {offset: Float64Array; toOffset: Float64Array} {
  const objects = heapObjects(heap)
  const words = new EdgeWords(memory)
  const offset = new Float64Array(g.edgeCount)
  const toOffset = new Float64Array(g.edgeCount)
  for (let o = 0; o < g.objectCount; o++) {
    const a = g.outStart[o]!
    const b = g.outStart[o + 1]!
    if (a === b) continue
    const targets = Array.from(g.outTo.subarray(a, b), t => objects.object(t))
    const source = objects.object(o)
    const found = words.find(
      source.start,
      source.size,
      0,
      targets.map(t => t.start),
      targets.map(t => t.start + t.size),
      b - a,
      offset.subarray(a, b),
      toOffset.subarray(a, b),
    )
    if (found !== b - a) throw new Error(`object ${o}: ${found} of its ${b - a} edges found in the core`)
  }
  return {offset, toOffset}
}
