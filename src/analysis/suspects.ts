import type {HeapIndex} from '../index/heap-index.js'
import type {RetentionIndex} from '../index/retention-index.js'
import type {Program} from '../program/program.js'
import {childrenBySize} from './dominated.js'
import {objectBrief, type ObjectBrief} from './object-brief.js'
import {pathsTo, type RootPath} from './paths.js'
import {liveBytes} from './top.js'

/** Walk down while one child keeps at least this share of its parent's retained bytes. */
const ONE_CHILD_KEEPS = 0.8
/** Steps down a chain of single big children (a linked list) before the walk stops and says so. */
const MAX_ACCUMULATION_STEPS = 256
/** Objects counted under an accumulation point before the tally says it stopped. */
const MAX_COUNTED = 100_000
/** Groups listed as what is accumulated. */
const ACCUMULATED_GROUPS = 5

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
  accumulated: Accumulated[]
  /** Objects tallied in `accumulated` (fewer than retainedObjects when the tally stopped). */
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
  const starts = retention.leakStarts()
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
  return {liveBytes: total, threshold, singles, groups, leakedBytes, leakStarts: starts.length, leaks}
}

export type Suspects = ReturnType<typeof suspectsOf>

function single(program: Program, index: HeapIndex, retention: RetentionIndex, id: number, total: number): SingleSuspect {
  const r = retention.retained(id)
  const brief = objectBrief(index, id)
  const path = pathsTo(program, index, retention, index.object(id).start, {paths: 1})?.paths[0] ?? null
  let at = id
  let depth = 0
  let atBytes = r.bytes
  let kids = childrenBySize(retention, at, 1)
  while (kids.top.length > 0 && kids.top[0]!.bytes >= ONE_CHILD_KEEPS * atBytes && depth < MAX_ACCUMULATION_STEPS) {
    at = kids.top[0]!.id
    atBytes = kids.top[0]!.bytes
    kids = childrenBySize(retention, at, 1)
    depth++
  }
  const atRetained = retention.retained(at)
  const tally = accumulatedUnder(index, retention, at)
  return {
    object: brief,
    retainedBytes: r.bytes,
    retainedObjects: r.objects,
    share: total ? r.bytes / total : 0,
    path,
    accumulationPoint: {...objectBrief(index, at), retainedBytes: atRetained.bytes, retainedObjects: atRetained.objects, children: kids.count},
    accumulationDepth: depth,
    accumulationCut: depth >= MAX_ACCUMULATION_STEPS,
    accumulated: tally.groups,
    counted: tally.counted,
  }
}

/** What the subtree under an object holds, by type (or size class for untyped objects), breadth-first and bounded. */
function accumulatedUnder(index: HeapIndex, retention: RetentionIndex, id: number): {groups: Accumulated[]; counted: number} {
  const groups = new Map<string, {objects: number; bytes: number}>()
  let frontier = retention.children(id)
  let counted = 0
  while (frontier.length > 0 && counted < MAX_COUNTED) {
    const ids = frontier.subarray(0, MAX_COUNTED - counted)
    const types = retention.typesOf(ids)
    const next: number[] = []
    for (let i = 0; i < ids.length; i++) {
      const o = index.object(ids[i]!)
      const t = types[i]!
      const key = t > 0 ? index.meta.typeNames[t - 1]! : `(untyped, ${o.size} B class)`
      const g = groups.get(key) ?? {objects: 0, bytes: 0}
      g.objects++
      g.bytes += o.size
      groups.set(key, g)
      for (const c of retention.children(ids[i]!)) next.push(c)
    }
    counted += ids.length
    frontier = Uint32Array.from(next)
  }
  const list = [...groups].map(([group, g]) => ({group, ...g})).sort((a, b) => b.bytes - a.bytes || (a.group < b.group ? -1 : 1))
  return {groups: list.slice(0, ACCUMULATED_GROUPS), counted}
}
