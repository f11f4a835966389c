import {RetentionIndex} from '../index/retention-index.js'
import type {HeapIndex} from '../index/heap-index.js'
import {viaLabels} from './name-vias.js'

/**
 * Live objects and bytes per name (any tier's: type, layout, runtime, …), and per size class for
 * objects without one. From a model-stage index: names by vtable alone, and no retained sizes
 * (null), which need the graph.
 */
export function classCounts(index: HeapIndex) {
  // Counted by analyze over every live object (name-counts.ts): here, a few arrays of a few KiB.
  const counts = index.nameCounts()
  // Keys in the order first met (address order), as ties in bytes are listed.
  const firstMet = (objects: Float64Array, first: Float64Array) =>
    [...objects.keys()].filter(k => objects[k]! > 0).sort((x, y) => first[x]! - first[y]!)
  const counted = (order: number[], objects: Float64Array, bytes: Float64Array) => order.map(k => [k, {objects: objects[k]!, bytes: bytes[k]!}] as const)
  const typed = counted(firstMet(counts['type.liveObjects'], counts['type.firstLive']), counts['type.liveObjects'], counts['type.liveBytes'])
  const untyped = counted(firstMet(counts['sizeClass.untypedObjects'], counts['sizeClass.firstUntyped']), counts['sizeClass.untypedObjects'], counts['sizeClass.untypedBytes'])
  // Bytes each type's objects keep alive, each byte once (an object inside another of its type adds nothing).
  const graph = index.holds('graph')
  const retained = graph ? new RetentionIndex(index).typeRetained() : null
  const vias = viaLabels(counts['type.viaObjects'], index.meta.typeNames.length)
  return {
    /** false: the index holds the heap model only (names by vtable, no retained sizes). */
    graph,
    types: [...typed]
      .map(([t, c]) => ({type: index.typeName(t)!, kind: index.typeKind(t)!, via: vias[t]!, ...c, retainedBytes: retained ? retained.bytes[t]! : null, retainedObjects: retained ? retained.objects[t]! : null}))
      .sort((a, b) => b.bytes - a.bytes),
    untyped: [...untyped]
      .map(([cl, c]) => ({sizeClass: cl, size: cl === 0 ? null : index.meta.sizeClassSizes[cl]!, ...c}))
      .sort((a, b) => b.bytes - a.bytes),
    /** What the analysis could not know (a module file missing: the types of its classes). */
    warnings: index.meta.moduleWarnings,
  }
}
