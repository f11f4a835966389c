import type {HeapIndex} from '../index/heap-index.js'
import {DamagedIndexError} from '../index/index-file.js'
import type {RetentionIndex} from '../index/retention-index.js'
import type {Program} from '../program/program.js'
import {objectBrief, type ObjectBrief} from './object-brief.js'
import {pathsTo, type RootPath} from './paths.js'
import {programLeakStarts} from './leaks.js'
import {untypedGroup} from './untyped-kind.js'
import {liveBytes} from './top.js'
import {groupBrief, holderGroups} from './holder-groups.js'


export interface Accumulated {
  group: string
  objects: number
  bytes: number
}

export interface SingleSuspect {
  object: ObjectBrief
  retainedBytes: number
  retainedObjects: number
  share: number
  path: RootPath | null
  accumulationPoint: ObjectBrief & {retainedBytes: number; retainedObjects: number; children: number}
  /** Steps from the suspect down to the accumulation point (0: the suspect itself). */
  accumulationDepth: number
  /** The walk stopped after MAX_ACCUMULATION_STEPS single big children (a long linked structure) before any fan-out. */
  accumulationCut: boolean
  /** The largest groups (types, or size classes of untyped objects) under the accumulation point. */
  accumulated: Accumulated[]
  /** Objects under the accumulation point, every one counted in `accumulated`'s tally. */
  counted: number
}

/**
 * Eclipse MAT's leak suspects on a C++ heap: single objects and groups of one type that retain
 * more than `threshold` of the live heap, each with its path from a root and its accumulation
 * point (where the retained memory fans out into many children); and the leaked graph's starting
 * points when leaked bytes pass the threshold too.
 */
export function suspectsOf(program: Program, index: HeapIndex, retention: RetentionIndex, threshold: number) {
  const total = liveBytes(index)
  const limit = threshold * total
  const singles: SingleSuspect[] = []
  const top = retention.top(retention.topCount())
  const topBytes = retention.retainedBytesOf(top)
  for (let i = 0; i < top.length && topBytes[i]! >= limit && total > 0; i++) {
    const id = top[i]!
    if (retention.parent(id) === null) continue // leaked: reported with the leak starts below
    singles.push(single(program, index, retention, id, total))
  }
  const {bytes: typeBytes, objects: typeObjects} = retention.typeRetained()
  const groups: Array<{type: string; retainedBytes: number; retainedObjects: number; share: number}> = []
  for (let t = 1; t < typeBytes.length; t++) {
    if (total > 0 && typeBytes[t]! >= limit) groups.push({type: index.meta.typeNames[t - 1]!, retainedBytes: typeBytes[t]!, retainedObjects: typeObjects[t]!, share: typeBytes[t]! / total})
  }
  groups.sort((a, b) => b.retainedBytes - a.retainedBytes)
  // Untyped blocks of one size under one holder (a C heap has few types or none): each group over
  // the threshold is a suspect of its own, ranked with the single objects by what it retains.
  // A group of one block that is a single suspect already is not said twice.
  const singleAt = new Set(singles.map(x => x.object.address))
  const blocks = total > 0
    ? holderGroups(index, 'reachable').filter(g => g.retainedBytes >= limit).map(g => groupBrief(index, g, total)).filter(g => g.objects > 1 || !singleAt.has(g.example.address))
    : []
  const starts = programLeakStarts(index, retention)
  const startBytes = retention.retainedBytesOf(starts)
  const startObjects = retention.retainedObjectsOf(starts)
  const leakedBytes = startBytes.reduce((n, b) => n + b, 0)
  const leaks =
    total > 0 && leakedBytes >= limit
      ? Array.from(starts, (id, i) => ({id, bytes: startBytes[i]!, objects: startObjects[i]!}))
          .sort((a, b) => b.bytes - a.bytes || a.id - b.id)
          .slice(0, 10)
          .map(s => ({...objectBrief(index, s.id), retainedBytes: s.bytes, retainedObjects: s.objects, share: s.bytes / total}))
      : []
  return {liveBytes: total, threshold, singles, blocks, groups, leakedBytes, leakStarts: starts.length, leaks}
}

export type Suspects = ReturnType<typeof suspectsOf>

function single(program: Program, index: HeapIndex, retention: RetentionIndex, id: number, total: number): SingleSuspect {
  const r = retention.retained(id)
  const brief = objectBrief(index, id)
  const path = pathsTo(program, index, retention, index.object(id).start, {paths: 1})?.paths[0] ?? null
  // Computed at analysis for every object that can be a suspect (dominators/accumulation.ts).
  const acc = index.meta.accumulations.find(a => a.holder === id)
  if (!acc) throw new DamagedIndexError(index.path, `no accumulation point for object ${id}`)
  const at = retention.retained(acc.point)
  const accumulated = acc.groups.map(g => ({group: g.type > 0 ? (index.typeName(g.type) ?? '?') : untypedGroup(g.size, index.meta.sizeClassSizes), objects: g.objects, bytes: g.bytes}))
  return {
    object: brief,
    retainedBytes: r.bytes,
    retainedObjects: r.objects,
    share: total ? r.bytes / total : 0,
    path,
    accumulationPoint: {...objectBrief(index, acc.point), retainedBytes: at.bytes, retainedObjects: at.objects, children: retention.childCount(acc.point)},
    accumulationDepth: acc.depth,
    accumulationCut: acc.cut,
    accumulated,
    counted: acc.objects,
  }
}
