import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'
import {GrowableF64, GrowableU32} from '../util/growable.js'

/** The live objects of one index in address order, as parallel arrays (no JS object per object). */
export interface LiveObjects {
  id: Uint32Array
  address: Float64Array
  size: Float64Array
  sizeClass: Uint32Array
  /** The object's type id in its own index (0: no type). */
  type: Uint32Array
}

export function liveObjects(index: HeapIndex): LiveObjects {
  const types = index.columns.type()
  const id = new GrowableU32()
  const address = new GrowableF64()
  const size = new GrowableF64()
  const sizeClass = new GrowableU32()
  const type = new GrowableU32()
  index.objects.forEachObject((slot, start, bytes, span) => {
    id.push(slot)
    address.push(start)
    size.push(bytes)
    sizeClass.push(index.spanSizeClass[span]!)
    type.push(types[slot]!)
  }, LIVE)
  return {id: id.toArray(), address: address.toArray(), size: size.toArray(), sizeClass: sizeClass.toArray(), type: type.toArray()}
}

export interface Counted {
  objects: number
  bytes: number
}

/** One row per type (or, for objects without a vtable, per size class). */
export interface TypeChange {
  /** The C++ type, or `size class N (S B)` / `large (pages)` for untyped objects. */
  type: string
  born: Counted
  died: Counted
  kept: Counted
  /** born − died. */
  net: Counted
}

/** Pairs of slots that hold the same object in both cores: the kept objects, by id in each index. */
export interface KeptPairs {
  before: Uint32Array
  after: Uint32Array
}

/**
 * Matches the live objects of two cores of one process. TCMalloc never moves an object, so an
 * object alive in both is at the same address in the same size class; a slot whose type differs
 * (a vtable in one and another or none in the other) was freed and reused: one died, one born.
 */
export function matchObjects(before: HeapIndex, after: HeapIndex): {types: TypeChange[]; kept: KeptPairs} {
  const a = liveObjects(before)
  const b = liveObjects(after)
  const rows = new Map<string, TypeChange>()
  const row = (index: HeapIndex, o: LiveObjects, i: number) => {
    const key = typeKey(index, o.type[i]!, o.sizeClass[i]!)
    let r = rows.get(key)
    if (!r) rows.set(key, (r = {type: key, born: zero(), died: zero(), kept: zero(), net: zero()}))
    return r
  }
  const keptBefore = new GrowableU32()
  const keptAfter = new GrowableU32()
  let i = 0
  let j = 0
  while (i < a.id.length || j < b.id.length) {
    const x = i < a.id.length ? a.address[i]! : Infinity
    const y = j < b.id.length ? b.address[j]! : Infinity
    if (x === y) {
      const ka = typeKey(before, a.type[i]!, a.sizeClass[i]!)
      const kb = typeKey(after, b.type[j]!, b.sizeClass[j]!)
      if (ka === kb && a.size[i] === b.size[j]) {
        add(row(after, b, j).kept, b.size[j]!)
        keptBefore.push(a.id[i]!)
        keptAfter.push(b.id[j]!)
      } else {
        add(row(before, a, i).died, a.size[i]!)
        add(row(after, b, j).born, b.size[j]!)
      }
      i++
      j++
    } else if (x < y) {
      add(row(before, a, i++).died, a.size[i - 1]!)
    } else {
      add(row(after, b, j++).born, b.size[j - 1]!)
    }
  }
  for (const r of rows.values()) r.net = {objects: r.born.objects - r.died.objects, bytes: r.born.bytes - r.died.bytes}
  const types = [...rows.values()].sort((p, q) => Math.abs(q.net.bytes) - Math.abs(p.net.bytes) || q.born.bytes + q.died.bytes - (p.born.bytes + p.died.bytes) || (p.type < q.type ? -1 : 1))
  return {types, kept: {before: keptBefore.toArray(), after: keptAfter.toArray()}}
}

/**
 * What an object is for the diff: its C++ type by name (type ids differ between indexes), else
 * its size class (the class includes the size, so a large block of other pages is another key).
 */
function typeKey(index: HeapIndex, type: number, sizeClass: number): string {
  if (type !== 0) return index.typeName(type)!
  if (sizeClass === 0) return 'large (pages)'
  return `size class ${sizeClass} (${index.meta.sizeClassSizes[sizeClass]} B)`
}

const zero = (): Counted => ({objects: 0, bytes: 0})
function add(c: Counted, bytes: number): void {
  c.objects++
  c.bytes += bytes
}
