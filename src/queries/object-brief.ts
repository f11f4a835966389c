import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {publicIdOf} from './object-ids.js'

/** An object as every query names it: its public id (the JSON export's), address, size, state, type. */
export function objectBrief(index: HeapIndex, slot: number) {
  const o = index.object(slot)
  return {id: publicIdOf(index, slot), address: hex(o.start), size: o.size, state: index.state(slot), type: index.type(slot), sizeClass: index.sizeClass(o)}
}

export type ObjectBrief = ReturnType<typeof objectBrief>
