import type {HeapIndex} from '../index/heap-index.js'

/**
 * What a live object is called in the memory report's groups: its name, or for an unnamed object
 * its size and the holder the holder walk found for it (null when none did, or before the graph).
 */
export function objectLabel(index: HeapIndex, types: ArrayLike<number>, holders: Int32Array | null, id: number, size: number): {name: string; holder: string | null} {
  const t = types[id]!
  const h = t === 0 && holders && holders[id]! >= 0 ? index.holderTable().holders[holders[id]!] : undefined
  return {name: t > 0 ? index.typeName(t)! : `(unnamed, ${size} B)`, holder: h ? `${h.kind} ${h.name}` : null}
}

/**
 * The columns objectLabel reads (the names, and the holders once the graph is built), each read
 * whole on its first use: a report that labels no object (no pinned span, no splitter) reads
 * neither (6 bytes a slot).
 */
export function objectLabelColumns(index: HeapIndex): {types: () => ArrayLike<number>; holders: () => Int32Array | null} {
  let types: ArrayLike<number> | undefined
  let holders: Int32Array | null | undefined
  return {
    types: () => (types ??= index.columns.type()),
    holders: () => (holders === undefined ? (holders = index.holds('graph') ? index.columns.holderOf() : null) : holders),
  }
}
