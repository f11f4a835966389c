import {hex} from '../errors.js'
import {DamagedIndexError} from './index-file.js'
import type {HeapIndex} from './heap-index.js'
import type {SightingFrame} from './index-meta.js'

/** Where a returned call's frame still points at a heap object: a lead to who last handled it, not a root. */
export interface Sighting {
  tid: number
  function: string | null
  /** `F+0x… (module)` of the stale return address that marks the frame. */
  frame: string
  /** Where the pointer lies in the dead frame. */
  at: string
}


/**
 * Sightings as the index stores them (found once at analyze time: finding them needs every
 * thread's unwound stack and libc's thread descriptors, too slow for each query): per sighting
 * its object slot, thread, address and frame label, in the order they were found.
 */
export function sightingTable(seen: Map<number, Sighting[]>) {
  const frames: SightingFrame[] = []
  const frameIds = new Map<string, number>()
  const rows = [...seen].flatMap(([slot, list]) => list.map(s => ({slot, s})))
  const object = new Uint32Array(rows.length)
  const tid = new Int32Array(rows.length)
  const at = new Float64Array(rows.length)
  const frame = new Uint32Array(rows.length)
  rows.forEach(({slot, s}, i) => {
    const key = JSON.stringify([s.function, s.frame])
    let id = frameIds.get(key)
    if (id === undefined) {
      id = frames.push({function: s.function, frame: s.frame}) - 1
      frameIds.set(key, id)
    }
    object[i] = slot
    tid[i] = s.tid
    at[i] = Number(s.at)
    frame[i] = id
  })
  return {arrays: {'sighting.object': object, 'sighting.tid': tid, 'sighting.at': at, 'sighting.frame': frame}, frames}
}

/** The index's sightings by object slot, each object's in the order the analysis found them; checked before use. */
export function storedSightings(index: HeapIndex): Map<number, Sighting[]> {
  const f = index.file
  const object = f.array('sighting.object')
  const tid = f.array('sighting.tid')
  const at = f.array('sighting.at')
  const frame = f.array('sighting.frame')
  const frames = index.meta.sightingFrames
  const seen = new Map<number, Sighting[]>()
  for (let i = 0; i < object.length; i++) {
    const label = frames[frame[i]!]
    if (object[i]! >= index.objectCount || !label || !Number.isSafeInteger(at[i]!)) throw new DamagedIndexError(f.path, `sighting ${i} is out of range`)
    const list = seen.get(object[i]!) ?? []
    list.push({tid: tid[i]!, function: label.function, frame: label.frame, at: hex(at[i]!)})
    seen.set(object[i]!, list)
  }
  return seen
}
