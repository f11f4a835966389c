import type {HeapIndex} from '../index/heap-index.js'

/** A per-slot column read by slot: an array, or a cache of blocks of one (util/block-cache.ts). */
export interface SlotColumn {
  at(id: number): number
}

/**
 * What a live object is called in the memory report's groups: its name, or for an unnamed object
 * its size and the holder the holder walk found for it (null when none did, or before the graph).
 */
export function objectLabel(index: HeapIndex, types: SlotColumn, holders: SlotColumn | null, id: number, size: number): {name: string; holder: string | null} {
  const t = types.at(id)
  const holder = t === 0 && holders ? holders.at(id) : -1
  const h = holder >= 0 ? index.holderTable().holders[holder] : undefined
  return {name: t > 0 ? index.typeName(t)! : `(unnamed, ${size} B)`, holder: h ? `${h.kind} ${h.name}` : null}
}

/** What the blocks of the two columns may hold together: the slots of a few spans labelled near each other. */
const LABEL_CACHE_BYTES = 1 << 20

/**
 * The columns objectLabel reads (the names, and the holders once the graph is built), and the
 * states that say which slots of a span to label, read by
 * blocks around the slots labelled and made on first use: a report that labels no object (no
 * pinned span, no splitter) reads neither, and one that labels a few spans' objects reads those
 * blocks, not the columns whole (6 bytes a slot, 180 MB at 30 M slots).
 */
export function objectLabelColumns(index: HeapIndex): ObjectLabelColumns {
  let columns: ReturnType<HeapIndex['columns']['labelBlocks']> | undefined
  const made = () => (columns ??= index.columns.labelBlocks(LABEL_CACHE_BYTES, index.holds('graph')))
  return {types: () => made().type, holders: () => made().holder, states: () => made().state}
}

/** The name ids, holders (null before the graph) and states of slots, each read by blocks on first use. */
export interface ObjectLabelColumns {
  types: () => SlotColumn
  holders: () => SlotColumn | null
  states: () => SlotColumn
}
