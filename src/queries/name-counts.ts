import type {HeapObjects} from '../heap/objects.js'
import {LIVE} from '../heap/states.js'
import {VIA_LABELS} from '../naming/via.js'

/** Size classes a span may have (span.sizeClass is a byte): the length of the per-size-class counts. */
export const SIZE_CLASSES = 256
/** Naming tiers counted per name id (type.viaObjects: TIERS entries a name id). */
export const TIERS = VIA_LABELS.length

/**
 * Live objects and bytes per name id and, for the objects without a name, per size class; each
 * one's first slot (the order they are first met in, address order, which breaks ties in bytes);
 * live objects per name id and naming tier. What classes and top --by type list: counted once by
 * analyze over every live object (in both stages' indexes), so that no query walks them all.
 */
export function countNames(objects: HeapObjects, types: ArrayLike<number>, via: ArrayLike<number>, spanSizeClass: ArrayLike<number>, typeCount: number) {
  const typeObjects = new Float64Array(typeCount)
  const typeBytes = new Float64Array(typeCount)
  const typeFirst = new Float64Array(typeCount).fill(-1)
  const viaObjects = new Float64Array(typeCount * TIERS)
  const classObjects = new Float64Array(SIZE_CLASSES)
  const classBytes = new Float64Array(SIZE_CLASSES)
  const classFirst = new Float64Array(SIZE_CLASSES).fill(-1)
  objects.forEachObject((id, _start, size, span) => {
    const t = types[id]!
    if (!(t < typeCount)) throw new Error(`object ${id}: type id ${t} past the ${typeCount} names`)
    if (t !== 0) {
      if (typeObjects[t]++ === 0) typeFirst[t] = id
      typeBytes[t] += size
      viaObjects[t * TIERS + Math.min(via[id]!, TIERS - 1)]!++
    } else {
      const c = spanSizeClass[span]!
      if (classObjects[c]++ === 0) classFirst[c] = id
      classBytes[c] += size
    }
  }, LIVE)
  return {
    'type.liveObjects': typeObjects,
    'type.liveBytes': typeBytes,
    'type.firstLive': typeFirst,
    'type.viaObjects': viaObjects,
    'sizeClass.untypedObjects': classObjects,
    'sizeClass.untypedBytes': classBytes,
    'sizeClass.firstUntyped': classFirst,
  }
}

export type NameCounts = ReturnType<typeof countNames>
