import {hierarchy, treemap, treemapSquarify, type HierarchyRectangularNode} from 'd3-hierarchy'
import {html, num, type Html} from './html.js'
import {bytes} from '../table.js'

/** One box: an object the dominator tree's top holds (or what the listed ones leave). */
export interface TreemapBox {
  /** The box's own words: an address, or "N others". */
  label: string
  /** The box it is drawn inside: its type, or the kind of untyped block. */
  group: string
  bytes: number
  /** The tooltip's extra line. */
  detail: string
  leaked: boolean
  /** Where a click on the box goes (toma serve: the object's page); the report's boxes have none. */
  href?: string
}

interface Node {
  name: string
  box?: TreemapBox
  children?: Node[]
}

const WIDTH = 1200
const HEIGHT = 520
/** Room above a group's boxes for its name. */
const GROUP_LABEL = 16
/** Fills of the groups, largest group first; the rest share the last. */
const FILLS = ['#4e79a7', '#59a14f', '#9c755f', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#f28e2b', '#8cd17d', '#86bcb6', '#bab0ac']
const LEAKED_FILL = '#e15759'
/** Roughly the width of one character of the 11 px labels: a label is cut to fit its box. */
const CHAR_WIDTH = 6.4

function fitted(text: string, width: number): string {
  const room = Math.floor((width - 6) / CHAR_WIDTH)
  if (room < 3) return ''
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`
}

/**
 * Bytes as a squarified treemap (`verb` says what a box's bytes are in its tooltip; the id names the
 * picture, one per page). Retained bytes (d3-hierarchy computes the layout here, at report time;
 * the page gets plain SVG): one box per object at the top of the dominator tree, inside one box
 * per type, areas proportional to what each keeps alive. Leaked structures are drawn red.
 */
export function treemapSvg(boxes: TreemapBox[], title: string, id = 'treemap', verb = 'retains', groupHref?: (group: string) => string | undefined): Html {
  const groups = new Map<string, TreemapBox[]>()
  for (const b of boxes) if (b.bytes > 0) groups.set(b.group, [...(groups.get(b.group) ?? []), b])
  const root = hierarchy<Node>({name: 'heap', children: [...groups].map(([name, list]) => ({name, children: list.map(box => ({name: box.label, box}))}))})
    .sum(d => d.box?.bytes ?? 0)
    .sort((a, b) => (b.value ?? 0) - (a.value ?? 0))
  const laid = treemap<Node>().tile(treemapSquarify).size([WIDTH, HEIGHT]).paddingOuter(2).paddingTop(d => (d.depth === 1 ? GROUP_LABEL : 2)).paddingInner(1).round(true)(root)
  const fillOf = new Map((laid.children ?? []).map((g, i) => [g.data.name, FILLS[Math.min(i, FILLS.length - 1)]!]))
  const rect = (n: HierarchyRectangularNode<Node>, fill: string, cls: string, tip: string) =>
    html`<rect class="${cls}" data-bytes="${n.value ?? 0}" x="${n.x0}" y="${n.y0}" width="${Math.max(0, n.x1 - n.x0)}" height="${Math.max(0, n.y1 - n.y0)}" fill="${fill}"><title>${tip}</title></rect>`
  const parts: Html[] = []
  for (const g of laid.children ?? []) {
    const drawn = html`${rect(g, '#eef1f4', 'group', `${g.data.name}: ${bytes(g.value ?? 0)} (${num(g.value ?? 0)} bytes) in ${num(g.children?.length ?? 0)} boxes`)}<text x="${g.x0 + 4}" y="${g.y0 + 12}" fill="#1d232b">${fitted(g.data.name, g.x1 - g.x0)}</text>`
    const href = groupHref?.(g.data.name)
    parts.push(href ? html`<a href="${href}">${drawn}</a>` : drawn)
  }
  for (const leaf of laid.leaves()) {
    const box = leaf.data.box
    if (!box) continue
    const fill = box.leaked ? LEAKED_FILL : fillOf.get(leaf.parent!.data.name)!
    const drawn = html`${rect(leaf, fill, box.leaked ? 'box leaked' : 'box', `${box.group} ${box.label}: ${verb} ${bytes(box.bytes)} (${num(box.bytes)} bytes)\n${box.detail}`)}${leaf.y1 - leaf.y0 >= 14 ? html`<text x="${leaf.x0 + 3}" y="${leaf.y0 + 12}" fill="#fff">${fitted(`${box.label} ${bytes(box.bytes)}`, leaf.x1 - leaf.x0)}</text>` : ''}`
    parts.push(box.href ? html`<a href="${box.href}">${drawn}</a>` : drawn)
  }
  return html`<svg id="${id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${title}" xmlns="http://www.w3.org/2000/svg">${parts}</svg>`
}
