import {modelHeap} from '../../src/allocators.js'
import {reachableFromRoots} from '../../src/graph/reachability.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {LIVE} from '../../src/heap/states.js'
import type {Program} from '../../src/program/program.js'

/** Models the heap, scans the graph and gives the start address of every live object no root reaches. */
export function unreachableObjects(program: Program) {
  const heap = modelHeap(program)
  const graph = scanHeapGraph(program, heap)
  const reached = reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
  const unreachable = new Set<number>()
  const s = heap.spans
  for (let i = 0; i < s.count; i++) {
    for (let k = 0; k < s.objectCount[i]!; k++) {
      const o = s.firstObject[i]! + k
      if (heap.state[o] === LIVE && !reached[o]) unreachable.add(s.start[i]! + k * s.objectSize[i]!)
    }
  }
  return {heap, graph, unreachable}
}
