import {RetentionIndex} from '../index/retention-index.js'
import type {HeapIndex} from '../index/heap-index.js'

/** Live objects and bytes per C++ type, and per size class for objects without a type. */
export function classCounts(index: HeapIndex) {
  const state = index.file.array<Uint8Array>('object.state')
  const types = index.file.array<Uint32Array>('object.type')
  const typed = new Map<number, {objects: number; bytes: number}>()
  const untyped = new Map<number, {objects: number; bytes: number}>()
  for (let s = 0; s < index.spanCount; s++) {
    const size = index.spanObjectSize[s]!
    const cl = index.spanSizeClass[s]!
    const first = index.spanFirstObject[s]!
    for (let k = 0; k < index.spanObjectCount[s]!; k++) {
      const i = first + k
      if (state[i] !== 0) continue
      const t = types[i]!
      const map = t === 0 ? untyped : typed
      const key = t === 0 ? cl : t
      const c = map.get(key) ?? {objects: 0, bytes: 0}
      c.objects++
      c.bytes += size
      map.set(key, c)
    }
  }
  // Bytes each type's objects keep alive, each byte once (an object inside another of its type adds nothing).
  const retained = new RetentionIndex(index).typeRetained()
  return {
    types: [...typed]
      .map(([t, c]) => ({type: index.meta.typeNames[t - 1]!, ...c, retainedBytes: retained.bytes[t]!, retainedObjects: retained.objects[t]!}))
      .sort((a, b) => b.bytes - a.bytes),
    untyped: [...untyped]
      .map(([cl, c]) => ({sizeClass: cl, size: cl === 0 ? null : index.meta.sizeClassSizes[cl]!, ...c}))
      .sort((a, b) => b.bytes - a.bytes),
  }
}
