import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {rootRefLabel} from './root-label.js'
import type {Program} from '../program/program.js'

export interface RefsOptions {
  incoming: boolean
  outgoing: boolean
  /** Follow incoming edges breadth-first this many levels (1 = direct referrers only). */
  depth: number
  /** At most this many edges listed per object and direction. */
  limit: number
}

const MAX_VISITED = 10_000

function brief(index: HeapIndex, id: number) {
  const o = index.object(id)
  return {id, address: hex(o.start), size: o.size, state: index.state(id), type: index.type(id)}
}

/** Who points into the object at an address (objects and roots), and what it points to. */
export function refsOf(program: Program, index: HeapIndex, address: number, options: RefsOptions) {
  const obj = index.objectAt(address)
  if (!obj) return null
  const rootsOf = (id: number) =>
    index.rootsOf(id).map(r => ({
      kind: r.kind,
      thread: r.thread,
      address: r.kind === 'register' ? null : hex(r.address),
      label: rootRefLabel(program, index, r),
      toOffset: r.toOffset,
    }))
  const incomingOf = (id: number) =>
    index.inEdges(id, options.limit).map(e => ({from: brief(index, e.from), offset: e.offset, toOffset: e.toOffset}))
  const result = {
    object: brief(index, obj.index),
    offset: address - obj.start,
    incomingCount: index.inDegree(obj.index),
    incoming: options.incoming ? incomingOf(obj.index) : [],
    roots: options.incoming ? rootsOf(obj.index) : [],
    outgoing: options.outgoing
      ? index.outEdges(obj.index).slice(0, options.limit).map(e => ({to: brief(index, e.to), offset: e.offset, toOffset: e.toOffset}))
      : [],
    /** Objects reached by following incoming edges beyond the direct referrers, by depth. */
    deeper: [] as Array<{depth: number; object: ReturnType<typeof brief>; pointsInto: string; offset: number; roots: ReturnType<typeof rootsOf>}>,
  }
  if (options.incoming && options.depth > 1) {
    const seen = new Set<number>([obj.index])
    let frontier = result.incoming.map(e => e.from.id).filter(id => !seen.has(id) && seen.add(id))
    for (let depth = 2; depth <= options.depth && frontier.length && seen.size < MAX_VISITED; depth++) {
      const next: number[] = []
      for (const id of frontier) {
        for (const e of index.inEdges(id, options.limit)) {
          if (seen.has(e.from) || seen.size >= MAX_VISITED) continue
          seen.add(e.from)
          next.push(e.from)
          result.deeper.push({depth, object: brief(index, e.from), pointsInto: hex(index.object(id).start), offset: e.offset, roots: rootsOf(e.from)})
        }
      }
      frontier = next
    }
  }
  return result
}

export type Refs = NonNullable<ReturnType<typeof refsOf>>
