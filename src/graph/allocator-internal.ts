import type {TcmallocHeap} from '../tcmalloc/heap.js'
import {LIVE} from '../tcmalloc/object-states.js'
import type {ObjectTypes} from './object-types.js'

/** object.reachable values: not reached (leaked), reached from a root, TCMalloc's own and unreferenced. */
export const UNREACHED = 0
export const REACHED = 1
export const ALLOCATOR_INTERNAL = 2

/** Classes of TCMalloc itself (gperftools' malloc_extension.cc, tcmalloc.cc, debugallocation.cc). */
const ALLOCATOR_CLASS = /^(MallocExtension|TCMallocImplementation|DebugMallocImplementation|tcmalloc::.*)$/

/**
 * TCMalloc's own objects: live objects of one of its classes whose vtable is in the allocator's
 * module, e.g. the default MallocExtension instance that TCMalloc replaces by its own at start-up
 * and never frees (in every core). Found as soon as types are named, so the objects' first words
 * can be dropped before the dominator pass allocates; markAllocatorInternal uses them once
 * reachability is known.
 */
export function allocatorObjects(heap: TcmallocHeap, firstWords: Float64Array, types: ObjectTypes): Uint32Array {
  const mappings = heap.module.loaded.module.mappings
  const inAllocator = (a: number) => mappings.some(m => a >= m.start && a < m.end)
  const ownType = types.names.map(n => ALLOCATOR_CLASS.test(n))
  const found: number[] = []
  for (let o = 0; o < firstWords.length; o++) {
    const t = types.typeOf[o]!
    if (t !== 0 && heap.state[o] === LIVE && ownType[t - 1] && inAllocator(firstWords[o]!)) found.push(o)
  }
  return Uint32Array.from(found)
}

/**
 * Marks, in `reached`, those of TCMalloc's own objects (allocatorObjects) that no root reaches,
 * and what only they reach, as ALLOCATOR_INTERNAL: they are not the program's leak. Returns how
 * many objects were marked.
 */
export function markAllocatorInternal(own: Uint32Array, reached: Uint8Array, outStart: Uint32Array, outTo: Uint32Array): number {
  const queue: number[] = []
  for (const o of own) {
    if (reached[o] !== UNREACHED) continue
    reached[o] = ALLOCATOR_INTERNAL
    queue.push(o)
  }
  for (let head = 0; head < queue.length; head++) {
    const o = queue[head]!
    for (let e = outStart[o]!, end = outStart[o + 1]!; e < end; e++) {
      const to = outTo[e]!
      if (reached[to] === UNREACHED) {
        reached[to] = ALLOCATOR_INTERNAL
        queue.push(to)
      }
    }
  }
  return queue.length
}
