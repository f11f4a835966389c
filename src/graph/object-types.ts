import {sharedUint16, sharedUint32} from '../util/shared-arrays.js'
import type {TypeNamer} from './types.js'

/**
 * Type ids, one per object slot: 16 bits while there are fewer than 65,536 names (2 bytes a slot
 * less, through the rest of the analysis and in the index), else 32.
 */
export type TypeIds = Uint16Array | Uint32Array

/** Per object slot, a type id: 0 for none, else 1 + index into `names`. */
export interface ObjectTypes {
  typeOf: TypeIds
  names: string[]
  typed: number
}

/** Slots of nameObjects' cache of module words (a power of two). */
const WORD_CACHE = 1024

/**
 * Names every scanned object whose first word is a vtable address point. The words come from the
 * pointer scan (which read every live object already), so nothing is read twice; distinct words
 * that point into modules are few next to objects, so each is asked of the namer once.
 */
export function nameObjects(firstWords: Float64Array, namer: TypeNamer, progress?: (phase: string, done: number, total: number) => void): ObjectTypes {
  // Shared: the dominator pass's worker reads it to walk its part of the tree (retention.ts).
  let typeOf: TypeIds = sharedUint16(firstWords.length)
  const idOfName = new Map<string, number>()
  const idOfWord = new Map<number, number>()
  const names: string[] = []
  let typed = 0
  // Most module words are a few vtables, each the first word of every object of its class: a
  // direct-mapped cache of the module words met answers those without the map, whose lookup by a
  // double costs more than the rest of the loop. Words outside modules (mostly heap pointers) are
  // not cached: they seldom repeat, and would evict the vtables.
  const cachedWord = new Float64Array(WORD_CACHE) // 0: an empty slot (every word looked up is > 0)
  const cachedId = new Uint32Array(WORD_CACHE)
  for (let i = 0; i < firstWords.length; i++) {
    if ((i & 0xfffff) === 0) progress?.('types', i, firstWords.length)
    const word = firstWords[i]!
    if (!(word > 0)) continue // NaN: not scanned (free or unreadable); 0: no pointer
    const slot = (word >>> 3) & (WORD_CACHE - 1)
    let id: number | undefined
    if (cachedWord[slot] === word) id = cachedId[slot]!
    else {
      // A vtable lies in a module's mapping; most first words (heap pointers, counts) do not.
      if (!namer.isModuleAddress(word)) continue
      id = idOfWord.get(word)
      if (id === undefined) {
        const name = namer.classOfVtablePointer(word)
        id = name === null ? 0 : (idOfName.get(name) ?? 0)
        if (name !== null && id === 0) {
          names.push(name)
          id = names.length
          idOfName.set(name, id)
          if (id > 0xffff && typeOf instanceof Uint16Array) typeOf = widened(typeOf)
        }
        idOfWord.set(word, id)
      }
      cachedWord[slot] = word
      cachedId[slot] = id
    }
    if (id !== 0) {
      typeOf[i] = id
      typed++
    }
  }
  return {typeOf, names, typed}
}

/** The same ids in 32 bits (shared, as the ids were). */
function widened(ids: Uint16Array): Uint32Array {
  const wide = sharedUint32(ids.length)
  wide.set(ids)
  return wide
}
