import type {HeapIndex} from '../index/heap-index.js'

const LIVE = 0

/**
 * The one public id of every object, as the JSON export numbers them (export-schema.md: dense,
 * an index into its objects): live objects first, in address order, then, with --all, every other
 * object in address order. A live object so has the same id in `export` and `export --all`, and
 * find-object, refs and DOT print that id too. -1 marks a slot the export does not list.
 */
export function publicIdArray(state: Uint8Array, all: boolean): Int32Array {
  const idOf = new Int32Array(state.length).fill(-1)
  let next = 0
  for (let i = 0; i < state.length; i++) if (state[i] === LIVE) idOf[i] = next++
  if (all) for (let i = 0; i < state.length; i++) if (state[i] !== LIVE) idOf[i] = next++
  return idOf
}

/** The public ids of a few slots (the objects one answer names), by publicIdOf. */
export function publicIdsOf(index: HeapIndex, slots: Iterable<number>): Map<number, number> {
  const ids = new Map<number, number>()
  const n = index.objectCount
  for (const slot of slots) if (slot >= 0 && slot < n && !ids.has(slot)) ids.set(slot, publicIdOf(index, slot))
  return ids
}

/** Live objects before each 4096-slot block, per index: a public id is then one short count away. */
const liveBefore = new WeakMap<HeapIndex, {state: Uint8Array; before: Uint32Array}>()
const BLOCK = 4096

/**
 * The public id of one slot (publicIdArray's rule), for answers that name objects one by one:
 * the state bytes are read once per index and counted per block, so each id costs at most one
 * block's scan.
 */
export function publicIdOf(index: HeapIndex, slot: number): number {
  let t = liveBefore.get(index)
  if (!t) {
    const state = index.file.array<Uint8Array>('object.state')
    const before = new Uint32Array(Math.ceil(state.length / BLOCK) + 1)
    let live = 0
    for (let i = 0; i < state.length; i++) {
      if (i % BLOCK === 0) before[i / BLOCK] = live
      if (state[i] === LIVE) live++
    }
    before[before.length - 1] = live
    liveBefore.set(index, (t = {state, before}))
  }
  const block = Math.floor(slot / BLOCK)
  let rank = t.before[block]!
  for (let i = block * BLOCK; i < slot; i++) if (t.state[i] === LIVE) rank++
  if (t.state[slot] === LIVE) return rank
  // Others follow every live object, in address order.
  return t.before[t.before.length - 1]! + (slot - rank)
}
