import type {Dominated, DominatedNode} from '../queries/dominated.js'
import {bytes} from './table.js'
import {count} from './wording.js'
import {dotString} from './dot-text.js'


/**
 * A Graphviz digraph of what one object keeps alive: its dominator subtree (each arrow from an
 * immediate dominator to what it dominates, largest retained first, as `dominators` lists them),
 * each box with the object's retained size. Nodes are named by public ids, as in the JSON export;
 * children left out by the per-node limit are one summary box per parent.
 */
export function dominatorTreeDot(d: Dominated, corePath: string): string {
  const lines = ['digraph dominators {', '  node [shape=box, fontname="monospace"];', '  rankdir=TB;']
  let others = 0
  const node = (n: DominatedNode, top: boolean) => {
    const o = n.object
    const label = [`#${o.id} ${o.address}`, o.type ?? (o.sizeClass ? `untyped, class ${o.sizeClass}` : 'untyped, large'), `${bytes(o.size)} own, ${bytes(n.retainedBytes)} retained (${count(n.retainedObjects, 'object')})`]
    lines.push(`  o${o.id} [label=${dotString(label)}, retained=${n.retainedBytes}${top ? ', style=bold, color=red' : ''}];`)
    for (const c of n.children) {
      node(c, false)
      lines.push(`  o${o.id} -> o${c.object.id};`)
    }
    const hidden = n.childCount - n.children.length
    if (hidden > 0) {
      lines.push(`  more${others} [shape=note, label=${dotString(`${count(hidden, 'more child', 'more children')}${n.children.length ? `, ${bytes(n.otherChildrenBytes)}` : ''}`)}];`, `  o${o.id} -> more${others} [style=dashed];`)
      others++
    }
  }
  if (d.immediateDominator) {
    const i = d.immediateDominator
    lines.push(`  o${i.id} [label=${dotString([`#${i.id} ${i.address}`, i.type ?? 'untyped', 'immediate dominator'])}, style=dashed];`, `  o${i.id} -> o${d.tree.object.id} [style=dashed];`)
  }
  node(d.tree, true)
  lines.push(`  label=${dotString([`dominator tree of ${d.tree.object.address}: what it keeps alive`, corePath])};`, '  labelloc=b;', '}')
  return lines.join('\n') + '\n'
}
