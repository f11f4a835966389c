import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'

/** Slots read at a time by a scan that stops once its page is full. */
const CHUNK = 1 << 20

/** One page of a class's live objects, in address order, and where the next page starts (null: none). */
export interface ClassPage {
  slots: number[]
  next: number | null
  /** The slot after the last one the page's scan read (what a page costs). */
  readTo: number
}

const lastLiveKnown = new WeakMap<HeapIndex, Map<number, number>>()

/**
 * The last live object named `typeId` (a class with live objects): found from the end of the
 * name ids backwards, by chunks, on a later page's first need of it, and kept per index and class
 * (an index cannot change). A class whose objects end early costs that one search once; every
 * page of it after stops at its last object instead of reading to the end.
 */
function lastLive(index: HeapIndex, typeId: number, first: number): number {
  let known = lastLiveKnown.get(index)
  if (!known) lastLiveKnown.set(index, (known = new Map()))
  const kept = known.get(typeId)
  if (kept !== undefined) return kept
  let found = first
  search: for (let to = index.objectCount; to > first; to -= CHUNK) {
    const at = Math.max(first, to - CHUNK)
    const types = index.columns.typeRange(at, to - at)
    let states: Uint8Array | undefined
    for (let k = types.lastIndexOf(typeId); k >= 0; k = k > 0 ? types.lastIndexOf(typeId, k - 1) : -1) {
      states ??= index.columns.stateRange(at, to - at)
      if (states[k] === LIVE) {
        found = at + k
        break search
      }
    }
  }
  known.set(typeId, found)
  return found
}

/**
 * The live objects named `typeId` (0: those no tier named), from slot `from` on, at most `limit`:
 * a scan of the name ids by chunks that starts at the class's first live object (the index keeps
 * it) and stops as soon as the page is full, or once it has met the class's count of objects (a
 * first page) or its last object (a later page: lastLive), so that no page of a class reads past
 * the class's last object. The cursor is a slot, not a page number: page k would need the k-1
 * pages before it scanned again.
 */
export function classObjects(index: HeapIndex, typeId: number, from: number, limit: number): ClassPage {
  const counts = index.nameCounts()
  if (typeId !== 0 && !(counts['type.liveObjects'][typeId]! > 0)) return {slots: [], next: null, readTo: from}
  const first = typeId === 0 ? 0 : counts['type.firstLive'][typeId]!
  // From the class's first object on, the live ones met are all there are before the cursor: once
  // they are as many as the class has, nothing is left to find (a rare class's page reads no further).
  const total = typeId !== 0 && from <= first ? counts['type.liveObjects'][typeId]! : Infinity
  // A later page does not know how many it has left: it stops after the class's last object.
  const end = typeId !== 0 && from > first ? lastLive(index, typeId, first) + 1 : index.objectCount
  const slots: number[] = []
  let readTo = Math.max(from, first)
  for (let at = readTo; at < end && slots.length < total; at += CHUNK) {
    const n = Math.min(CHUNK, end - at)
    const types = index.columns.typeRange(at, n)
    readTo = at + n
    let states: Uint8Array | undefined
    // indexOf: the engine's own search over the chunk, not a loop of ours per slot.
    for (let k = types.indexOf(typeId); k >= 0; k = types.indexOf(typeId, k + 1)) {
      states ??= index.columns.stateRange(at, n)
      if (states[k] !== LIVE) continue
      if (slots.length === limit) return {slots, next: at + k, readTo}
      slots.push(at + k)
      if (slots.length === total) return {slots, next: null, readTo}
    }
  }
  return {slots, next: null, readTo}
}

/**
 * The live objects no tier named in spans of size class `sizeClass` (0: large objects), from slot
 * `from` on, at most `limit`: the spans of that class in address order, each one's slots read
 * with one ranged read of their names and states.
 */
export function untypedObjectsOfSizeClass(index: HeapIndex, sizeClass: number, from: number, limit: number): ClassPage {
  const spanClass = index.spanSizeClass
  const firstObject = index.spanFirstObject
  const objectCount = index.spanObjectCount
  const slots: number[] = []
  let readTo = from
  for (let s = 0; s < spanClass.length; s++) {
    if (spanClass[s] !== sizeClass) continue
    const start = firstObject[s]!
    const n = objectCount[s]!
    if (start + n <= from) continue
    const skip = Math.max(0, from - start)
    const types = index.columns.typeRange(start + skip, n - skip)
    const states = index.columns.stateRange(start + skip, n - skip)
    readTo = start + n
    for (let k = 0; k < types.length; k++) {
      if (types[k] !== 0 || states[k] !== LIVE) continue
      if (slots.length === limit) return {slots, next: start + skip + k, readTo}
      slots.push(start + skip + k)
    }
  }
  return {slots, next: null, readTo}
}
