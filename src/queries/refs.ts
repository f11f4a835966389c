import {hex} from '../errors.js'
import type {EdgeRef, HeapIndex} from '../index/heap-index.js'
import {rootRefLabel} from './root-label.js'
import type {Program} from '../program/program.js'
import {publicIdsOf} from './object-ids.js'
import {storedSightings} from '../index/sighting-index.js'

export interface RefsOptions {
  incoming: boolean
  outgoing: boolean
  /** Follow incoming edges breadth-first this many levels (1 = direct referrers only). */
  depth: number
  /** At most this many edges listed per object and direction (and roots, and self-references). */
  limit: number
}

const MAX_VISITED = 10_000

/**
 * Who points into the object at an address (objects and roots), and what it points to. The
 * object's words that point into itself (a slab's internal links, a std::string's local buffer)
 * are counted apart as self-references, so the real referrers are listed first; every list says
 * how many there are in all beside the first `limit` it shows.
 */
export function refsOf(program: Program, index: HeapIndex, address: number, options: RefsOptions) {
  const obj = index.objectAt(address)
  if (!obj) return null
  const self = obj.index
  const out = index.outEdges(self)
  const selfEdges = out.filter(e => e.to === self)
  const outgoing = out.filter(e => e.to !== self)
  // Counts are whole whichever direction is listed.
  const incoming = {count: index.inDegree(self) - selfEdges.length, edges: options.incoming ? index.inEdges(self, options.limit, self) : ([] as EdgeRef[])}
  const roots = index.rootsOf(self)
  const deeper: Array<{depth: number; from: EdgeRef}> = []
  let deeperCut = false
  if (options.incoming && options.depth > 1) {
    const seen = new Set<number>([self])
    let frontier = incoming.edges.map(e => e.from).filter(id => !seen.has(id) && seen.add(id))
    deeperCut = incoming.count > incoming.edges.length
    for (let depth = 2; depth <= options.depth && frontier.length; depth++) {
      const next: number[] = []
      for (const id of frontier) {
        if (index.inDegree(id) > options.limit) deeperCut = true
        for (const e of index.inEdges(id, options.limit)) {
          if (seen.has(e.from)) continue
          if (seen.size >= MAX_VISITED) {
            deeperCut = true
            break
          }
          seen.add(e.from)
          next.push(e.from)
          deeper.push({depth, from: e})
        }
      }
      frontier = next
    }
  }
  const shownOut = options.outgoing ? outgoing.slice(0, options.limit) : []
  const ids = publicIdsOf(index, [self, ...incoming.edges.map(e => e.from), ...shownOut.map(e => e.to), ...deeper.map(d => d.from.from)])
  const brief = (slot: number) => {
    const o = index.object(slot)
    return {id: ids.get(slot)!, address: hex(o.start), size: o.size, state: index.state(slot), type: index.type(slot), sizeClass: index.sizeClass(o)}
  }
  const rootsOf = (slot: number) => index.rootsOf(slot).map(r => ({kind: r.kind, thread: r.thread, address: r.kind === 'register' ? null : hex(r.address), label: rootRefLabel(program, index, r), toOffset: r.toOffset}))
  return {
    object: brief(self),
    offset: address - obj.start,
    /** Not referrers: frames of returned calls that still point at it (who last handled it). */
    lastSeen: storedSightings(index).get(self) ?? [],
    /** Words of the object that point into the object itself: not referrers, counted apart. */
    selfReferences: {count: selfEdges.length, first: selfEdges.slice(0, options.limit).map(e => ({offset: e.offset, toOffset: e.toOffset}))},
    /** Pointers from other objects, in all (`incoming` lists the first `limit`). */
    incomingCount: incoming.count,
    incoming: incoming.edges.map(e => ({from: brief(e.from), offset: e.offset, toOffset: e.toOffset})),
    rootCount: roots.length,
    roots: options.incoming ? rootsOf(self).slice(0, options.limit) : [],
    /** Pointers to other objects, in all (`outgoing` lists the first `limit`). */
    outgoingCount: outgoing.length,
    outgoing: shownOut.map(e => ({to: brief(e.to), offset: e.offset, toOffset: e.toOffset})),
    /** Objects reached by following incoming edges beyond the direct referrers, by depth. */
    deeper: deeper.map(d => ({depth: d.depth, object: brief(d.from.from), pointsInto: hex(index.object(d.from.to).start), offset: d.from.offset, roots: rootsOf(d.from.from)})),
    /** True when a limit cut the walk up (more referrers exist than `deeper` lists). */
    deeperCut,
  }
}

export type Refs = NonNullable<ReturnType<typeof refsOf>>
