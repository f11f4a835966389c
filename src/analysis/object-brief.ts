import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'

/** An object as every query names it: id, address, size, state, type. */
export function objectBrief(index: HeapIndex, id: number) {
  const o = index.object(id)
  return {id, address: hex(o.start), size: o.size, state: index.state(id), type: index.type(id), sizeClass: index.spanSizeClass[o.span]!}
}

export type ObjectBrief = ReturnType<typeof objectBrief>
