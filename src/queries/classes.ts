import {RetentionIndex} from '../index/retention-index.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'
import {ViaCounts} from './name-vias.js'
import {DamagedIndexError} from '../index/index-file.js'

/**
 * Live objects and bytes per name (any tier's: type, layout, runtime, …), and per size class for
 * objects without one. From a model-stage index: names by vtable alone, and no retained sizes
 * (null), which need the graph.
 */
export function classCounts(index: HeapIndex) {
  const types = index.columns.type()
  // Counted in arrays by type id and by size class (a map per object costs more than the walk).
  const typeCount = index.meta.typeNames.length + 1
  const typedObjects = new Float64Array(typeCount)
  const typedBytes = new Float64Array(typeCount)
  const untypedObjects = new Float64Array(256)
  const untypedBytes = new Float64Array(256)
  const sizeClass = index.spanSizeClass
  // Keys in the order first met (address order), as ties in bytes are listed.
  const typedOrder: number[] = []
  const untypedOrder: number[] = []
  // The tiers of each name, counted in the same walk (nameVias walks the objects again).
  const via = index.columns.via()
  const viaCounts = new ViaCounts(typeCount - 1)
  index.objects.forEachObject((id, _start, size, span) => {
    const t = types[id]!
    if (t >= typeCount) throw new DamagedIndexError(index.path, `type id ${t} is out of range`)
    viaCounts.add(t, via[id]!)
    if (t !== 0) {
      if (typedObjects[t]++ === 0) typedOrder.push(t)
      typedBytes[t] += size
    } else {
      const c = sizeClass[span]!
      if (untypedObjects[c]++ === 0) untypedOrder.push(c)
      untypedBytes[c] += size
    }
  }, LIVE)
  const counted = (order: number[], objects: Float64Array, bytes: Float64Array) => order.map(k => [k, {objects: objects[k]!, bytes: bytes[k]!}] as const)
  const typed = counted(typedOrder, typedObjects, typedBytes)
  const untyped = counted(untypedOrder, untypedObjects, untypedBytes)
  // Bytes each type's objects keep alive, each byte once (an object inside another of its type adds nothing).
  const graph = index.holds('graph')
  const retained = graph ? new RetentionIndex(index).typeRetained() : null
  const vias = viaCounts.labels()
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
