import type {Program} from '../program/program.js'
import type {TcmallocHeap} from '../tcmalloc/heap.js'
import {LIVE} from '../tcmalloc/object-states.js'
import type {TypeNamer} from './types.js'

/** Per object slot, a type id: 0 for none, else 1 + index into `names`. */
export interface ObjectTypes {
  typeOf: Uint32Array
  names: string[]
  typed: number
}

const BATCH = 1 << 20

/**
 * Names every live object whose first word is a vtable address point. Reads first words span by
 * span through one reusable buffer (a span's objects are contiguous), not one read per object.
 */
export function nameObjects(
  program: Program,
  heap: TcmallocHeap,
  namer: TypeNamer,
  progress?: (phase: string, done: number, total: number) => void,
): ObjectTypes {
  const {spans, state} = heap
  const memory = program.core.memory
  const typeOf = new Uint32Array(spans.totalObjects)
  const ids = new Map<string, number>()
  const names: string[] = []
  let typed = 0
  const buf = Buffer.alloc(BATCH)
  for (let s = 0; s < spans.count; s++) {
    if ((s & 0x3ff) === 0) progress?.('types', s, spans.count)
    const first = spans.firstObject[s]!
    const n = spans.objectCount[s]!
    const size = spans.objectSize[s]!
    let anyLive = false
    for (let k = 0; k < n && !anyLive; k++) anyLive = state[first + k] === LIVE
    if (!anyLive || size < 8) continue
    const start = spans.start[s]!
    // A small-object span is read whole; a large object alone needs only its first word.
    const small = n > 1 && n * size <= BATCH
    if (small && !memory.readInto(start, n * size, buf)) continue
    for (let k = 0; k < n; k++) {
      if (state[first + k] !== LIVE) continue
      let word: number | undefined
      if (small) word = buf.readUInt32LE(k * size) + buf.readUInt32LE(k * size + 4) * 0x1_0000_0000
      else word = memory.readU64(start + k * size)
      if (word === undefined || word === 0) continue
      const name = namer.classOfVtablePointer(word)
      if (name === null) continue
      let id = ids.get(name)
      if (id === undefined) {
        names.push(name)
        id = names.length
        ids.set(name, id)
      }
      typeOf[first + k] = id
      typed++
    }
  }
  return {typeOf, names, typed}
}
