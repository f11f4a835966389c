import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {rootRefLabel} from './root-label.js'
import type {Program} from '../program/program.js'
import {objectBrief, type ObjectBrief} from './object-brief.js'

/** How far a search for more paths (or for a leak's starting points) may go back through referrers. */
const MAX_VISITED = 200_000

export interface PathStep {
  object: ObjectBrief
  /** Offset of the pointer field in this object that leads to the next step (null on the last). */
  offset: number | null
  /** Offset inside the next object that the pointer points to. */
  nextOffset: number | null
}

export interface RootPath {
  root: {kind: string; thread: number | null; address: string | null; label: string; toOffset: number}
  steps: PathStep[]
  /** Steps left out of a very long chain between its first and last PATH_ENDS steps (0 when whole). */
  omitted: number
}

/** A chain longer than twice this shows its two ends (a list of a million nodes is still one line of count). */
const PATH_ENDS = 100

/**
 * Shortest chains of pointers from roots to the object holding an address: the first by the
 * breadth-first parents stored at analysis (as long as the path), more by a backward search
 * that takes each root once. For a leaked object, the leaked objects nothing else points to that
 * reach it instead.
 */
export function pathsTo(program: Program, index: HeapIndex, retention: RetentionIndex, address: number, options: {paths: number; visit?: number}) {
  const obj = index.objectAt(address)
  if (!obj) return null
  const state = index.state(obj.index)
  const parent = state === 'live' ? retention.parent(obj.index) : null
  const result = {
    object: objectBrief(index, obj.index),
    offset: address - obj.start,
    reachable: parent !== null,
    /** No root of the program reaches it, and the allocator keeps it for itself: no leak. */
    allocatorOwn: state === 'live' && parent === null && index.reachability(obj.index) === 'allocator',
    paths: [] as RootPath[],
    /** The search stopped before finding as many paths as asked (at MAX_VISITED objects, or `visit`). */
    searchCut: false,
    leakStarts: [] as Array<ObjectBrief & {retainedBytes: number; retainedObjects: number}>,
  }
  if (state !== 'live') return result
  if (parent !== null) {
    const chain: number[] = [obj.index]
    for (let p: number | 'root' | null = parent; typeof p === 'number' && chain.length <= index.objectCount; p = retention.parent(p)) chain.push(p)
    chain.reverse()
    result.paths.push(describePath(program, index, chain, null))
    if (options.paths > 1) {
      const more = pathsFromOtherRoots(program, index, retention, obj.index, options.paths, result.paths[0]!.root)
      result.paths.push(...more.paths)
      result.searchCut = more.cut
    }
  } else {
    const found = backwardSearch(retention, obj.index, id => isLeakStart(retention, id), options.paths, options.visit)
    result.searchCut = found.cut
    for (const {at} of found.hits) {
      const r = retention.retained(at)
      result.leakStarts.push({...objectBrief(index, at), retainedBytes: r.bytes, retainedObjects: r.objects})
    }
  }
  return result
}

export type Paths = NonNullable<ReturnType<typeof pathsTo>>

/** The chain [first … target] as steps, with the root that points into its first object. */
function describePath(program: Program, index: HeapIndex, chain: number[], rootAt: number | null): RootPath {
  const roots = index.rootsOf(chain[0]!)
  const r = roots[rootAt ?? 0]!
  const omitted = chain.length > 2 * PATH_ENDS ? chain.length - 2 * PATH_ENDS : 0
  const shown = omitted ? [...chain.slice(0, PATH_ENDS), ...chain.slice(-PATH_ENDS)] : chain
  const steps: PathStep[] = shown.map((id, i) => {
    const next = chain[omitted && i >= PATH_ENDS ? i + omitted + 1 : i + 1]
    const edge = next === undefined ? undefined : index.edgeBetween(id, next)
    return {object: objectBrief(index, id), offset: edge?.offset ?? null, nextOffset: edge?.toOffset ?? null}
  })
  return {root: {kind: r.kind, thread: r.thread, address: r.kind === 'register' ? null : hex(r.address), label: rootRefLabel(program, index, r), toOffset: r.toOffset}, steps, omitted}
}

let leakStartSet: {of: RetentionIndex; set: Set<number>} | undefined
function isLeakStart(retention: RetentionIndex, id: number): boolean {
  if (leakStartSet?.of !== retention) leakStartSet = {of: retention, set: new Set(retention.leakStarts())}
  return leakStartSet.set.has(id)
}

/**
 * Breadth-first backwards from `target` through referrers until `want` objects satisfy `hit`;
 * each hit comes with its chain forward to the target (a shortest one).
 */
function backwardSearch(retention: RetentionIndex, target: number, hit: (id: number) => boolean, want: number, visit = MAX_VISITED) {
  const next = new Map<number, number>([[target, -1]])
  const queue = [target]
  const hits: Array<{at: number; chain: number[]}> = []
  let cut = false
  for (let h = 0; h < queue.length && hits.length < want; h++) {
    const v = queue[h]!
    if (hit(v)) {
      const chain = [v]
      for (let x = next.get(v)!; x !== -1; x = next.get(x)!) chain.push(x)
      hits.push({at: v, chain})
      if (hits.length >= want) break
    }
    for (const u of retention.referrers(v)) {
      if (next.has(u)) continue
      if (next.size >= visit) {
        cut = true
        break
      }
      next.set(u, v)
      queue.push(u)
    }
  }
  return {hits, cut}
}

/** Up to `want` paths in all, each from a root not used by an earlier one. */
function pathsFromOtherRoots(program: Program, index: HeapIndex, retention: RetentionIndex, target: number, want: number, first: RootPath['root']) {
  const used = new Set([`${first.kind}:${first.thread}:${first.address ?? first.label}`])
  const paths: RootPath[] = []
  const found = backwardSearch(retention, target, id => retention.parent(id) === 'root', want + 1)
  for (const {chain} of found.hits) {
    const roots = index.rootsOf(chain[0]!)
    for (let k = 0; k < roots.length && paths.length < want - 1; k++) {
      const p = describePath(program, index, chain, k)
      const key = `${p.root.kind}:${p.root.thread}:${p.root.address ?? p.root.label}`
      if (used.has(key)) continue
      used.add(key)
      paths.push(p)
    }
    if (paths.length >= want - 1) break
  }
  return {paths, cut: found.cut}
}
