import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {ALLOCATOR_INTERNAL, UNREACHED} from '../graph/allocator-internal.js'

/**
 * Live objects that no root reaches, from the index: totals, per type, and the objects themselves
 * (largest first), each with how many other objects point into it. An object nothing points to
 * is where a leaked structure starts; a leaked cycle has no such object, every member is pointed to.
 */
export function leaksOf(index: HeapIndex, limit: number) {
  const state = index.file.array<Uint8Array>('object.state')
  const reachable = index.file.array<Uint8Array>('object.reachable')
  const types = index.file.array<Uint32Array>('object.type')
  const byType = new Map<number, {objects: number; bytes: number}>()
  const found: Array<{id: number; start: number; size: number}> = []
  let objects = 0
  let bytes = 0
  const allocatorInternal = {objects: 0, bytes: 0}
  for (let s = 0; s < index.spanCount; s++) {
    const first = index.spanFirstObject[s]!
    const size = index.spanObjectSize[s]!
    for (let k = 0; k < index.spanObjectCount[s]!; k++) {
      const id = first + k
      if (state[id] !== 0) continue
      if (reachable[id] === ALLOCATOR_INTERNAL) {
        allocatorInternal.objects++
        allocatorInternal.bytes += size
      }
      if (reachable[id] !== UNREACHED) continue
      objects++
      bytes += size
      const t = byType.get(types[id]!) ?? {objects: 0, bytes: 0}
      t.objects++
      t.bytes += size
      byType.set(types[id]!, t)
      found.push({id, start: index.spanStart[s]! + k * size, size})
    }
  }
  found.sort((a, b) => b.size - a.size || a.start - b.start)
  return {
    objects,
    bytes,
    /** TCMalloc's own unreferenced allocations (the MallocExtension singleton): left out of the list and totals. */
    allocatorInternal,
    byType: [...byType]
      .map(([t, c]) => ({type: t === 0 ? null : index.meta.typeNames[t - 1]!, ...c}))
      .sort((a, b) => b.bytes - a.bytes),
    largest: found.slice(0, limit).map(o => ({
      id: o.id,
      address: hex(o.start),
      size: o.size,
      type: index.type(o.id),
      pointedToBy: index.inDegree(o.id),
      pointsTo: index.outEdges(o.id).length,
    })),
  }
}

export type Leaks = ReturnType<typeof leaksOf>
