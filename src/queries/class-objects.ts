import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'

/** Slots read at a time by a scan that stops once its page is full. */
const CHUNK = 1 << 20

/** One page of a class's live objects, in address order, and where the next page starts (null: none). */
export interface ClassPage {
  slots: number[]
  next: number | null
}

/**
 * The live objects named `typeId` (0: those no tier named), from slot `from` on, at most `limit`:
 * a scan of the name ids by chunks that starts at the class's first live object (the index keeps
 * it) and stops as soon as the page is full, so a page of a common class reads a few chunks and
 * only a rare class's last page reads to the end. The cursor is a slot, not a page number: page
 * k would need the k-1 pages before it scanned again.
 */
export function classObjects(index: HeapIndex, typeId: number, from: number, limit: number): ClassPage {
  const counts = index.nameCounts()
  if (typeId !== 0 && !(counts['type.liveObjects'][typeId]! > 0)) return {slots: [], next: null}
  const first = typeId === 0 ? 0 : counts['type.firstLive'][typeId]!
  // From the class's first object on, the live ones met are all there are before the cursor: once
  // they are as many as the class has, nothing is left to find (a rare class's page reads no further).
  const total = typeId !== 0 && from <= first ? counts['type.liveObjects'][typeId]! : Infinity
  const slots: number[] = []
  const end = index.objectCount
  for (let at = Math.max(from, first); at < end && slots.length < total; at += CHUNK) {
    const n = Math.min(CHUNK, end - at)
    const types = index.columns.typeRange(at, n)
    let states: Uint8Array | undefined
    // indexOf: the engine's own search over the chunk, not a loop of ours per slot.
    for (let k = types.indexOf(typeId); k >= 0; k = types.indexOf(typeId, k + 1)) {
      states ??= index.columns.stateRange(at, n)
      if (states[k] !== LIVE) continue
      if (slots.length === limit) return {slots, next: at + k}
      slots.push(at + k)
      if (slots.length === total) return {slots, next: null}
    }
  }
  return {slots, next: null}
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
  for (let s = 0; s < spanClass.length; s++) {
    if (spanClass[s] !== sizeClass) continue
    const start = firstObject[s]!
    const n = objectCount[s]!
    if (start + n <= from) continue
    const skip = Math.max(0, from - start)
    const types = index.columns.typeRange(start + skip, n - skip)
    const states = index.columns.stateRange(start + skip, n - skip)
    for (let k = 0; k < types.length; k++) {
      if (types[k] !== 0 || states[k] !== LIVE) continue
      if (slots.length === limit) return {slots, next: start + skip + k}
      slots.push(start + skip + k)
    }
  }
  return {slots, next: null}
}
