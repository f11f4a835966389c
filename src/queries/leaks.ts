import {RetentionIndex} from '../index/retention-index.js'
import {objectBrief} from './object-brief.js'
import {publicIdsOf} from './object-ids.js'
import type {Sighting} from '../index/sighting-index.js'
import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'
import {ALLOCATOR_INTERNAL, UNREACHED} from '../graph/allocator-internal.js'
import {nameVias} from './name-vias.js'
import type {Program} from '../program/program.js'
import {groupBrief, holderGroups} from './holder-groups.js'

/**
 * Live objects that no root reaches, from the index: totals, per type, and the objects themselves
 * (largest first), each with how many other objects point into it. An object nothing points to
 * is where a leaked structure starts; a leaked cycle has no such object, every member is pointed to.
 */
export function leaksOf(index: HeapIndex, limit: number, sightings: Map<number, Sighting[]> = new Map(), program?: Program) {
  const reachable = index.columns.reachable()
  const types = index.columns.type()
  const vias = nameVias(index)
  const byType = new Map<number, {objects: number; bytes: number}>()
  const found: Array<{id: number; start: number; size: number}> = []
  let objects = 0
  let bytes = 0
  const allocatorInternal = {objects: 0, bytes: 0}
  index.objects.forEachObject((id, start, size) => {
    if (reachable[id] === ALLOCATOR_INTERNAL) {
      allocatorInternal.objects++
      allocatorInternal.bytes += size
    }
    if (reachable[id] !== UNREACHED) return
    objects++
    bytes += size
    const t = byType.get(types[id]!) ?? {objects: 0, bytes: 0}
    t.objects++
    t.bytes += size
    byType.set(types[id]!, t)
    found.push({id, start, size})
  }, LIVE)
  found.sort((a, b) => b.size - a.size || a.start - b.start)
  // Where each leaked structure starts (nothing else leaked points to it), with what it retains.
  const retention = new RetentionIndex(index)
  const startIds = programLeakStarts(index, retention)
  const startBytes = retention.retainedBytesOf(startIds)
  const startObjects = retention.retainedObjectsOf(startIds)
  const starts = Array.from(startIds, (id, i) => ({id, bytes: startBytes[i]!, objects: startObjects[i]!})).sort((a, b) => b.bytes - a.bytes || a.id - b.id)
  return {
    objects,
    bytes,
    startCount: starts.length,
    starts: starts.slice(0, limit).map(s => ({...objectBrief(index, s.id), retainedBytes: s.bytes, retainedObjects: s.objects, pointedToBy: index.inDegree(s.id), lastSeen: sightings.get(s.id) ?? []})),
    /** TCMalloc's own unreferenced allocations (the MallocExtension singleton, a sampled object's proxy): left out of the list and totals. */
    allocatorInternal,
    byType: [...byType]
      .map(([t, c]) => ({type: index.typeName(t), via: vias[t]!, ...c}))
      .sort((a, b) => b.bytes - a.bytes),
    /**
     * The untyped leaked objects by size and holder (the typed object above them in the leaked
     * dominator tree, or none): a C program's leaks, which byType shows as one "(untyped)" row.
     * Only when the program is at hand (its symbols name the holders).
     */
    untypedGroups: program && objects > 0 ? holderGroups(index, 'leaked').map(g => groupBrief(index, g, 0)) : [],
    largest: found.slice(0, limit).map(o => ({
      id: o.id,
      address: hex(o.start),
      size: o.size,
      type: index.type(o.id),
      pointedToBy: index.inDegree(o.id),
      pointsTo: index.outDegree(o.id),
      lastSeen: sightings.get(o.id) ?? [],
    })),
  }
}

/** Where the program's leaked structures start: TCMalloc's own unreferenced allocations start no leak of the program's. */
export function programLeakStarts(index: HeapIndex, retention: RetentionIndex): Uint32Array {
  const reachable = index.columns.reachable()
  return retention.leakStarts().filter(id => reachable[id] === UNREACHED)
}

/** leaksOf with the largest objects named by their public ids (the JSON export's), not the index's slots: what users see. */
export function leaksWithPublicIds(index: HeapIndex, limit: number, sightings?: Map<number, Sighting[]>, program?: Program) {
  const found = leaksOf(index, limit, sightings, program)
  const ids = publicIdsOf(index, found.largest.map(o => o.id))
  return {...found, largest: found.largest.map(o => ({...o, id: ids.get(o.id)!}))}
}

export type Leaks = ReturnType<typeof leaksOf>

