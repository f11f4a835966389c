import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../tcmalloc/object-states.js'

/**
 * Live objects that no root reaches, from the index: totals, per type, and the objects themselves
 * (largest first), each with how many other objects point into it. An object nothing points to
 * is where a leaked structure starts; a leaked cycle has no such object, every member is pointed to.
 */
export function leaksOf(index: HeapIndex, limit: number) {
  const reachable = index.file.array<Uint8Array>('object.reachable')
  const types = index.file.array<Uint32Array>('object.type')
  const byType = new Map<number, {objects: number; bytes: number}>()
  const found: Array<{id: number; start: number; size: number}> = []
  let objects = 0
  let bytes = 0
  index.objects.forEachObject((id, start, size) => {
    if (reachable[id]) return
    objects++
    bytes += size
    const t = byType.get(types[id]!) ?? {objects: 0, bytes: 0}
    t.objects++
    t.bytes += size
    byType.set(types[id]!, t)
    found.push({id, start, size})
  }, LIVE)
  found.sort((a, b) => b.size - a.size || a.start - b.start)
  return {
    objects,
    bytes,
    byType: [...byType]
      .map(([t, c]) => ({type: index.typeName(t), ...c}))
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
