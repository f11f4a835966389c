import type {AddressSpace} from '../core/address-space.js'
import {PF_X} from '../core/core-header.js'
import type {HeapModel} from '../heap/heap-model.js'
import {heapObjects} from '../heap/objects.js'
import {LIVE} from '../heap/states.js'
import type {ObjectTypes} from './object-types.js'
import {forwardReaders, type ForwardEdges} from './forward-edges.js'
import type {Uint32Blocks} from '../util/block-cache.js'

/** object.reachable values: not reached (leaked), reached from a root, the allocator's own and unreferenced. */
export const UNREACHED = 0
export const REACHED = 1
export const ALLOCATOR_INTERNAL = 2

/**
 * The allocator's own objects: the live slots its structures say it holds for itself (the model's
 * ownSlots: google/tcmalloc's proxies of sampled objects), and live objects of one of its classes (the model's internalClasses) whose vtable is in the allocator's
 * module, e.g. the default MallocExtension instance that TCMalloc replaces by its own at start-up
 * and never frees (in every core before gperftools 2.16). Found as soon as types are named, so the
 * objects' first words can be dropped before the dominator pass allocates; markAllocatorInternal
 * uses them once reachability is known.
 *
 * Without the library's file no type is named, so that instance is known by what the core shows
 * of it (defaultExtensionShape): measured on fixture v2.10-p32-shared analysed with and without
 * its files, the one such object is the one named MallocExtension with them.
 */
export function allocatorObjects(heap: HeapModel, firstWords: Float64Array, types: ObjectTypes, memory: AddressSpace): Uint32Array {
  const mappings = heap.module.loaded.module.mappings
  // Most first words are heap pointers, counts or NaN (not scanned): out of the module's bounds
  // at once, without a closure over its mappings (this runs for every live object).
  const lo = Math.min(...mappings.map(m => m.start))
  const hi = Math.max(...mappings.map(m => m.end))
  const inAllocator = (a: number) => a >= lo && a < hi && mappings.some(m => a >= m.start && a < m.end)
  const ownType = types.names.map(n => heap.internalClasses.test(n))
  // A static link's module is the program's too: a vtable in it may be any of the program's classes.
  const ownLibrary = heap.ownLibrary
  const objects = heapObjects(heap)
  const found: number[] = Array.from(heap.ownSlots).filter(o => heap.state[o] === LIVE)
  const own = new Set(found)
  for (let o = 0; o < firstWords.length; o++) {
    const word = firstWords[o]!
    if (!(word >= lo && word < hi) || heap.state[o] !== LIVE || !inAllocator(word) || own.has(o)) continue
    const t = types.typeOf[o]!
    if (t !== 0 ? ownType[t - 1] : ownLibrary && defaultExtensionShape(heap, memory, firstWords[o]!, objects.object(o).size)) found.push(o)
  }
  return Uint32Array.from(found)
}

/**
 * An untyped object that can only be MallocExtension's default instance: an 8-byte slot (the
 * class has a vtable pointer and no fields) whose word points into libtcmalloc's data at a vtable
 * as the Itanium C++ ABI lays it out: offset-to-top 0, a type_info pointer into the library, and a
 * first virtual function in the library's code (any address of the library when neither its file
 * nor its text is at hand: gcore does not dump unwritten file pages). The library defines no other class of 8 bytes.
 */
function defaultExtensionShape(heap: HeapModel, memory: AddressSpace, vptr: number, size: number): boolean {
  // The vtable is data the core holds (relocated, so written: gcore dumps it), never code.
  const segment = memory.segmentAt(vptr)
  if (size !== 8 || vptr % 8 !== 0 || !segment || segment.flags & PF_X) return false
  const mappings = heap.module.loaded.module.mappings
  const typeInfo = memory.readU64(vptr - 8)
  const firstVirtual = memory.readU64(vptr)
  return (
    memory.readU64(vptr - 16) === 0 &&
    typeInfo !== undefined && mappings.some(m => typeInfo >= m.start && typeInfo < m.end) &&
    firstVirtual !== undefined && heap.module.isCode(firstVirtual)
  )
}

/**
 * Marks, in `reached`, those of the allocator's own objects (allocatorObjects) that no root reaches,
 * and what only they reach, as ALLOCATOR_INTERNAL: they are not the program's leak. Returns how
 * many objects were marked.
 */
export function markAllocatorInternal(own: Uint32Array, reached: Uint8Array, edges: ForwardEdges): number {
  const {starts, targets, close} = forwardReaders(edges)
  try {
    return markFrom(own, reached, starts, targets)
  } finally {
    close()
  }
}

function markFrom(own: Uint32Array, reached: Uint8Array, starts: Uint32Blocks, targets: Uint32Blocks): number {
  const queue: number[] = []
  for (const o of own) {
    if (reached[o] !== UNREACHED) continue
    reached[o] = ALLOCATOR_INTERNAL
    queue.push(o)
  }
  for (let head = 0; head < queue.length; head++) {
    const o = queue[head]!
    for (let e = starts.at(o), end = starts.at(o + 1); e < end; e++) {
      const to = targets.at(e)
      if (reached[to] === UNREACHED) {
        reached[to] = ALLOCATOR_INTERNAL
        queue.push(to)
      }
    }
  }
  return queue.length
}
