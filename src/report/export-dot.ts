import {publicIdsOf} from '../queries/object-ids.js'
import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {rootRefLabel} from '../queries/root-label.js'
import type {Program} from '../program/program.js'
import {count} from './wording.js'
import {grouped} from '../util/grouped.js'
import {dotComment, dotString} from './dot-text.js'

export interface DotLimits {
  /** Objects drawn at most (the centre always). */
  maxNodes: number
  /** Arrows between objects drawn at most, after parallel pointers are merged into one. */
  maxEdges: number
}

/** Roots drawn per object; the others are counted in the object's label. */
const ROOTS_PER_OBJECT = 4
/** Offsets written on one merged arrow; the others are counted. */
const OFFSETS_PER_EDGE = 8

/**
 * A Graphviz digraph of the neighbourhood of one object: objects within `depth` pointers in
 * either direction, breadth-first, at most `maxNodes`. All the pointers from one object to another
 * are one arrow with their count and offsets (Graphviz refuses a label too long for a thousand
 * parallel arrows); an object's pointers into itself are counted in its own box, not drawn. Nodes
 * are named by the objects' public ids (those of the JSON export). What the caps left out is
 * said in the graph's label.
 */
export function exportDot(program: Program, index: HeapIndex, corePath: string, around: number, depth: number, limits: DotLimits): string {
  const start = index.objectAt(around)
  if (!start) return ''
  const nodes = new Set<number>([start.index])
  let frontier = [start.index]
  let nodeCapHit = false
  for (let d = 0; d < depth && frontier.length; d++) {
    const next: number[] = []
    for (const id of frontier) {
      for (const other of [...index.outTargets(id), ...index.referrerIds(id, limits.maxNodes + 1)]) {
        if (nodes.has(other)) continue
        if (nodes.size >= limits.maxNodes) {
          nodeCapHit = true
          continue
        }
        nodes.add(other)
        next.push(other)
      }
    }
    frontier = next
  }
  const ids = publicIdsOf(index, nodes)
  const name = (slot: number) => `o${ids.get(slot)}`
  // Merge: one arrow per (from, to) pair with every offset; self-pointers counted per object.
  const merged = new Map<string, {from: number; to: number; offsets: string[]}>()
  const selfOffsets = new Map<number, string[]>()
  let pointersOut = 0
  let pointersIn = 0
  const inFromDrawn = new Map<number, number>()
  for (const id of nodes) {
    for (const e of index.outEdges(id)) {
      const offsets = `+${e.offset}${e.toOffset ? `→+${e.toOffset}` : ''}`
      if (e.to === id) {
        const list = selfOffsets.get(id) ?? []
        list.push(offsets)
        selfOffsets.set(id, list)
      } else if (nodes.has(e.to)) {
        const key = `${id}:${e.to}`
        const m = merged.get(key) ?? {from: id, to: e.to, offsets: []}
        m.offsets.push(offsets)
        merged.set(key, m)
        inFromDrawn.set(e.to, (inFromDrawn.get(e.to) ?? 0) + 1)
      } else pointersOut++
    }
  }
  for (const id of nodes) pointersIn += index.inDegree(id) - (selfOffsets.get(id)?.length ?? 0) - (inFromDrawn.get(id) ?? 0)
  const arrows = [...merged.values()]
  const drawn = arrows.slice(0, limits.maxEdges)
  const some = (list: string[], max: number) => (list.length > max ? `${list.slice(0, max).join(' ')} …+${list.length - max}` : list.join(' '))
  const lines = [
    'digraph heap {',
    `  ${dotComment(`toma: the objects around ${hex(around)} in ${corePath}`)}`,
    '  node [shape=box, fontname="monospace", fontsize=10];',
    '  edge [fontname="monospace", fontsize=9];',
  ]
  let rootNodes = 0
  let rootsLeftOut = 0
  for (const id of nodes) {
    const o = index.object(id)
    const type = index.type(id)
    const self = selfOffsets.get(id) ?? []
    const roots = index.rootsOf(id)
    const label = [`#${ids.get(id)} ${hex(o.start)}`, type ?? 'untyped', `${o.size} B${index.state(id) === 'live' ? '' : ` ${index.state(id)}`}`]
    if (self.length) label.push(`${count(self.length, 'self-pointer')}: ${some(self, OFFSETS_PER_EDGE)}`)
    if (roots.length > ROOTS_PER_OBJECT) label.push(`${count(roots.length - ROOTS_PER_OBJECT, 'more root')}`)
    const attrs = [`label=${dotString(label)}`, `address="${hex(o.start)}"`]
    if (self.length) attrs.push(`self_pointers=${self.length}`, `self_offsets=${dotString(self.join(' '))}`)
    if (id === start.index) attrs.push('style=bold', 'color=red')
    lines.push(`  ${name(id)} [${attrs.join(', ')}];`)
    for (const root of roots.slice(0, ROOTS_PER_OBJECT)) {
      lines.push(`  r${rootNodes} [shape=ellipse, label=${dotString([root.kind, rootRefLabel(program, index, root)])}];`, `  r${rootNodes} -> ${name(id)};`)
      rootNodes++
    }
    rootsLeftOut += Math.max(0, roots.length - ROOTS_PER_OBJECT)
  }
  for (const a of drawn) {
    const label = a.offsets.length > 1 ? `×${a.offsets.length}: ${some(a.offsets, OFFSETS_PER_EDGE)}` : a.offsets[0]!
    lines.push(`  ${name(a.from)} -> ${name(a.to)} [label=${dotString(label)}, count=${a.offsets.length}, offsets=${dotString(a.offsets.join(' '))}];`)
  }
  const leftOut = [
    nodeCapHit ? `objects beyond --max-nodes ${limits.maxNodes}` : '',
    arrows.length > drawn.length ? `${arrows.length - drawn.length} of ${arrows.length} arrows (--max-edges ${limits.maxEdges})` : '',
    pointersOut + pointersIn > 0 ? `${count(pointersOut, 'pointer')} to and ${grouped(pointersIn)} from objects not drawn` : '',
    rootsLeftOut ? `${count(rootsLeftOut, 'root')} (${ROOTS_PER_OBJECT} drawn per object)` : '',
  ].filter(Boolean)
  const note = `${count(nodes.size, 'object')} within ${count(depth, 'pointer')} of ${hex(start.start)}, ${count(drawn.length, 'arrow')}${leftOut.length ? `; left out: ${leftOut.join('; ')}` : ''}`
  lines.push(`  label=${dotString([note, corePath])};`, '  labelloc=b;', '}')
  return lines.join('\n') + '\n'
}
