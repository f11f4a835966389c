import {RetentionIndex} from '../index/retention-index.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'
import {nameVias} from './name-vias.js'

/**
 * Live objects and bytes per name (any tier's: type, layout, runtime, …), and per size class for
 * objects without one. From a model-stage index: names by vtable alone, and no retained sizes
 * (null), which need the graph.
 */
export function classCounts(index: HeapIndex) {
  const types = index.columns.type()
  const typed = new Map<number, {objects: number; bytes: number}>()
  const untyped = new Map<number, {objects: number; bytes: number}>()
  index.objects.forEachObject((id, _start, size, span) => {
    const t = types[id]!
    const map = t === 0 ? untyped : typed
    const key = t === 0 ? index.spanSizeClass[span]! : t
    const c = map.get(key) ?? {objects: 0, bytes: 0}
    c.objects++
    c.bytes += size
    map.set(key, c)
  }, LIVE)
  // Bytes each type's objects keep alive, each byte once (an object inside another of its type adds nothing).
  const graph = index.holds('graph')
  const retained = graph ? new RetentionIndex(index).typeRetained() : null
  const vias = nameVias(index)
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
