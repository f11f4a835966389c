import {RetentionIndex} from '../index/retention-index.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../tcmalloc/object-states.js'
import type {TypeIds} from '../graph/object-types.js'
import {VIA_LABELS} from '../naming/via.js'

/** The tiers that named a type's objects, most objects first ("vtable", "layout, debug-info"). */
function viaList(counts: Float64Array): string {
  return [...counts.keys()].filter(v => v > 0 && counts[v]! > 0).sort((a, b) => counts[b]! - counts[a]!).map(v => VIA_LABELS[v]).join(', ')
}

/** Live objects and bytes per name (any tier's: type, layout, runtime, …), and per size class for objects without one. */
export function classCounts(index: HeapIndex) {
  const types = index.file.array<TypeIds>('object.type')
  const vias = index.file.array<Uint8Array>('object.via')
  const typed = new Map<number, {objects: number; bytes: number}>()
  const untyped = new Map<number, {objects: number; bytes: number}>()
  // Per type, objects by the tier that named them (a name may come from several).
  const viaCounts = new Map<number, Float64Array>()
  index.objects.forEachObject((id, _start, size, span) => {
    const t = types[id]!
    if (t !== 0) {
      let v = viaCounts.get(t)
      if (!v) viaCounts.set(t, (v = new Float64Array(VIA_LABELS.length)))
      v[Math.min(vias[id]!, VIA_LABELS.length - 1)]!++
    }
    const map = t === 0 ? untyped : typed
    const key = t === 0 ? index.spanSizeClass[span]! : t
    const c = map.get(key) ?? {objects: 0, bytes: 0}
    c.objects++
    c.bytes += size
    map.set(key, c)
  }, LIVE)
  // Bytes each type's objects keep alive, each byte once (an object inside another of its type adds nothing).
  const retained = new RetentionIndex(index).typeRetained()
  return {
    types: [...typed]
      .map(([t, c]) => ({type: index.typeName(t)!, kind: index.typeKind(t)!, via: viaList(viaCounts.get(t)!), ...c, retainedBytes: retained.bytes[t]!, retainedObjects: retained.objects[t]!}))
      .sort((a, b) => b.bytes - a.bytes),
    untyped: [...untyped]
      .map(([cl, c]) => ({sizeClass: cl, size: cl === 0 ? null : index.meta.sizeClassSizes[cl]!, ...c}))
      .sort((a, b) => b.bytes - a.bytes),
    /** What the analysis could not know (a module file missing: the types of its classes). */
    warnings: index.meta.moduleWarnings,
  }
}
