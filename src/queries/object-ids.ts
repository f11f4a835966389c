import type {HeapIndex} from '../index/heap-index.js'
import {PUBLIC_ID_BLOCK} from '../index/schema.js'

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


/** Live objects before each PUBLIC_ID_BLOCK-slot block, then the total: analysis stores it in the index. */
export function liveBeforeBlocks(state: Uint8Array): Uint32Array {
  const before = new Uint32Array(Math.ceil(state.length / PUBLIC_ID_BLOCK) + 1)
  let live = 0
  for (let b = 0; b * PUBLIC_ID_BLOCK < state.length; b++) {
    before[b] = live
    const end = Math.min(state.length, (b + 1) * PUBLIC_ID_BLOCK)
    for (let i = b * PUBLIC_ID_BLOCK; i < end; i++) if (state[i] === LIVE) live++
  }
  before[before.length - 1] = live
  return before
}

/**
 * The public id of one slot (publicIdArray's rule), for answers that name objects one by one:
 * the index holds the live count before each block, so an id costs two words and one block of
 * state bytes, read by range.
 */
export function publicIdOf(index: HeapIndex, slot: number): number {
  const c = index.columns
  const block = Math.floor(slot / PUBLIC_ID_BLOCK)
  const blocks = c.liveBeforeLength()
  let rank = c.liveBefore(block)[0]!
  const state = c.states(block * PUBLIC_ID_BLOCK, slot - block * PUBLIC_ID_BLOCK + 1)
  for (let i = 0; i + 1 < state.length; i++) if (state[i] === LIVE) rank++
  if (state[state.length - 1] === LIVE) return rank
  // Others follow every live object, in address order.
  return c.liveBefore(blocks - 1)[0]! + (slot - rank)
}
