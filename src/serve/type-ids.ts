import type {HeapIndex} from '../index/heap-index.js'

const cache = new WeakMap<HeapIndex, Map<string, number>>()

/** A name's id in object.type (1…: the meta's typeNames[id - 1]), for a link to its class; built once per index. Names are unique (naming/object-names.ts idOf makes one id a name). */
export function typeIdOf(index: HeapIndex, name: string): number | undefined {
  let ids = cache.get(index)
  if (!ids) {
    ids = new Map()
    const names = index.meta.typeNames
    for (let i = 0; i < names.length; i++) if (!ids.has(names[i]!)) ids.set(names[i]!, i + 1)
    cache.set(index, ids)
  }
  return ids.get(name)
}
