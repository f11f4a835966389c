import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {rootRefLabel} from '../analysis/root-label.js'
import type {Program} from '../program/program.js'

const MAX_NODES = 500

/**
 * A Graphviz digraph of the neighbourhood of one object: objects within `depth` edges in either
 * direction (at most MAX_NODES), the edges among them labelled with offsets, and their roots.
 */
export function exportDot(program: Program, index: HeapIndex, around: number, depth: number): string {
  const start = index.objectAt(around)
  if (!start) return ''
  const nodes = new Set<number>([start.index])
  let frontier = [start.index]
  for (let d = 0; d < depth && frontier.length && nodes.size < MAX_NODES; d++) {
    const next: number[] = []
    for (const id of frontier) {
      for (const e of [...index.outEdges(id), ...index.inEdges(id, MAX_NODES)]) {
        for (const other of [e.from, e.to]) {
          if (!nodes.has(other) && nodes.size < MAX_NODES) {
            nodes.add(other)
            next.push(other)
          }
        }
      }
    }
    frontier = next
  }
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
  const lines = ['digraph heap {', '  node [shape=box, fontname="monospace", fontsize=10];', '  edge [fontname="monospace", fontsize=9];']
  for (const id of nodes) {
    const o = index.object(id)
    const type = index.type(id)
    const style = id === start.index ? ', style=bold, color=red' : ''
    lines.push(`  o${id} [label="${esc(`${hex(o.start)}\n${type ?? 'untyped'}\n${o.size} B`)}"${style}];`)
  }
  let r = 0
  for (const id of nodes) {
    for (const e of index.outEdges(id)) {
      if (nodes.has(e.to)) lines.push(`  o${id} -> o${e.to} [label="+${e.offset}${e.toOffset ? ` → +${e.toOffset}` : ''}"];`)
    }
    for (const root of index.rootsOf(id)) {
      lines.push(`  r${r} [shape=ellipse, label="${esc(`${root.kind}\n${rootRefLabel(program, index, root)}`)}"];`, `  r${r} -> o${id};`)
      r++
    }
  }
  lines.push('}')
  return lines.join('\n') + '\n'
}
