import type {RootPath} from '../../queries/paths.js'
import type {SingleSuspect, Suspects} from '../../queries/suspects.js'
import type {topObjects, topTypes} from '../../queries/top.js'
import {blockGroupText} from '../held-memory-text.js'
import {bytes} from '../table.js'
import {objectKind, offset, percent} from '../wording.js'
import {dataTable} from './data-table.js'
import {html, num, type Html} from './html.js'
import {objectLine, type ReportSection} from './section.js'
import {treemapSvg, type TreemapBox} from './treemap.js'

/** Rows of the dominator-top table (the treemap draws more boxes than that). */
const TOP_ROWS = 25

type TopObjects = ReturnType<typeof topObjects>

/** The group a box of the retained-bytes treemap is drawn in: its object's kind, marked when leaked. */
export function retainedBoxGroup(o: TopObjects['objects'][number]): string {
  return o.reachable ? objectKind(o) : `leaked ${objectKind(o)}`
}

/**
 * The treemap of what the dominator tree's top retains: a box per listed object, in a box per
 * type, and one box for what the others retain; `href` makes each box a link (toma serve: the
 * object's page, `rest` the dominator tree, `group` a type's class).
 */
export function retainedTreemap(top: TopObjects, href?: {object: (o: TopObjects['objects'][number]) => string; rest: string; group?: (group: string) => string | undefined}): Html {
  const listed = top.objects.reduce((n, o) => n + o.retainedBytes, 0)
  const others = `${num(top.of - top.objects.length)} others`
  const boxes: TreemapBox[] = top.objects.map(o => ({
    label: o.address,
    group: retainedBoxGroup(o),
    bytes: o.retainedBytes,
    detail: `${objectKind(o)}, ${num(o.size)} B itself, ${num(o.retainedObjects)} objects retained, ${percent(o.share)} of the live heap${o.reachable ? '' : '; leaked'}`,
    leaked: !o.reachable,
    ...(href ? {href: href.object(o)} : {}),
  }))
  // What the boxes drawn leave of the heap is one box, so the areas add up to the whole.
  if (top.of > top.objects.length && top.liveBytes > listed) boxes.push({label: others, group: 'the rest', bytes: top.liveBytes - listed, detail: `${others} at the top of the dominator tree`, leaked: false, ...(href ? {href: href.rest} : {})})
  return html`<p class="dim">Every live byte is retained by exactly one object at the top of the dominator tree (held by roots alone, or starting a leak). Areas: retained bytes of the ${num(top.objects.length)} largest of ${num(top.of)} and of all others together, in one box per type; red: leaked. Live heap ${bytes(top.liveBytes)}. Hover a box for details${href ? ', click it to open it' : ''}.</p>
${treemapSvg(boxes, 'retained bytes by type and dominator', 'treemap', 'retains', href?.group)}`
}

/** The treemap of what the dominator tree's top retains, the top objects and the top types. */
export function dominatorSection(top: TopObjects, types: ReturnType<typeof topTypes>): ReportSection {
  const body = html`${retainedTreemap(top)}
<h3>Objects retaining the most</h3>
${dataTable({
  id: 'dominator-top',
  max: TOP_ROWS,
  total: top.of,
  whole: 'toma top --json --limit 0',
  columns: [{title: 'address'}, {title: 'type'}, {title: 'shallow', numeric: true}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'share', numeric: true}, {title: 'reachable'}],
  rows: top.objects.map(o => [html`<code>${o.address}</code>`, objectKind(o), o.size, o.retainedBytes, o.retainedObjects, {value: o.share, text: percent(o.share)}, o.reachable ? 'yes' : html`<span class="warn">leaked</span>`]),
})}
<h3>Retained bytes per type and per group of untyped blocks (one size, one holder), each byte once</h3>
${dataTable({
  id: 'top-types',
  filter: true,
  total: types.of,
  whole: 'toma top --by type --json --limit 0',
  columns: [{title: 'type'}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'share', numeric: true}],
  rows: types.types.map(t => [t.type ?? (t.blocks ? blockGroupText(t.blocks) : '(untyped)'), t.retainedBytes, t.retainedObjects, {value: t.share, text: percent(t.share)}]),
})}`
  return {id: 'dominators', title: 'What retains the memory', body}
}

/** A chain of pointers from a root to an object, root first (each object as `line` shows it: the served pages link it). */
export function pathHtml(p: RootPath, line: (o: RootPath['steps'][number]['object']) => Html = objectLine): Html {
  const r = p.root
  const half = p.steps.length / 2 - 1
  return html`<div class="path"><div><b>${r.kind}</b> ${r.label}${r.address && r.kind !== 'global' ? html` @ <code>${r.address}</code>` : ''} → ${offset(r.toOffset)}</div>
${p.steps.map((s, i) => html`<div>&nbsp;&nbsp;${line(s.object)}${s.offset === null ? '' : html` <span class="dim">.${offset(s.offset)} → ${offset(s.nextOffset ?? 0)}</span>`}</div>${p.omitted && i === half ? html`<div class="dim">… ${num(p.omitted)} more steps …</div>` : ''}`)}</div>`
}

function suspectHtml(x: SingleSuspect, i: number): Html {
  const a = x.accumulationPoint
  const where =
    x.accumulationDepth === 0
      ? html`accumulation point: the suspect itself, fanning out into ${num(a.children)} children`
      : x.accumulationCut
        ? html`no fan-out within ${num(x.accumulationDepth)} steps down the dominator tree (a long chain); stopped at ${objectLine(a)}, which retains ${bytes(a.retainedBytes)}`
        : html`accumulation point, ${num(x.accumulationDepth)} steps down the dominator tree: ${objectLine(a)} retains ${bytes(a.retainedBytes)}, fanning out into ${num(a.children)} children`
  return html`<div class="suspect">
<h3>Suspect ${i + 1}: ${objectKind(x.object)} at <code>${x.object.address}</code> retains ${bytes(x.retainedBytes)} (${percent(x.share)}) in ${num(x.retainedObjects)} objects</h3>
${x.path ? html`<div>path from a root:</div>${pathHtml(x.path)}` : ''}
<div>${where}</div>
${x.accumulated.length === 0
  ? html`<div class="dim">nothing accumulated below it: it is one block</div>`
  : dataTable({
      id: `suspect-${i + 1}-accumulated`,
      columns: [{title: 'accumulated there'}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}],
      rows: x.accumulated.map(g => [g.group, g.objects, g.bytes]),
    })}
</div>`
}

/** Eclipse MAT's leak suspects: single objects, types, leaked structures over the threshold. */
export function suspectsSection(s: Suspects): ReportSection {
  const none = !s.singles.length && !s.blocks.length && !s.groups.length && !s.leaks.length
  const blocks = s.blocks.length
    ? html`<h3>Groups of untyped blocks (one size, one holder) that retain more than the threshold</h3>${dataTable({
        id: 'suspect-blocks',
        columns: [{title: 'blocks'}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'share', numeric: true}, {title: 'e.g.'}],
        rows: s.blocks.map(b => [blockGroupText(b), b.retainedBytes, b.retainedObjects, {value: b.share, text: percent(b.share)}, html`<code>${b.example.address}</code>`]),
      })}`
    : ''
  // The groups come first when they retain more than the largest single suspect.
  const blocksFirst = s.blocks.length > 0 && s.blocks[0]!.retainedBytes >= (s.singles[0]?.retainedBytes ?? 0)
  const body = html`<p class="dim">Live heap ${bytes(s.liveBytes)}; a suspect retains more than ${percent(s.threshold)} of it (${bytes(Math.ceil(s.threshold * s.liveBytes))}).</p>
${none ? html`<p>No suspect: no object, type, group of blocks or leak retains that much.</p>` : ''}
${blocksFirst ? blocks : ''}
${s.singles.map(suspectHtml)}
${blocksFirst ? '' : blocks}
${s.groups.length
  ? html`<h3>Types whose objects together retain more than the threshold</h3>${dataTable({
      id: 'suspect-types',
      columns: [{title: 'type'}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'share', numeric: true}],
      rows: s.groups.map(g => [g.type, g.retainedBytes, g.retainedObjects, {value: g.share, text: percent(g.share)}]),
    })}`
  : ''}
${s.leaks.length
  ? html`<h3>Leaked: ${bytes(s.leakedBytes)} from ${num(s.leakStarts)} starting points</h3>${dataTable({
      id: 'suspect-leaks',
      total: s.leakStarts,
      whole: 'toma leaks --json',
      columns: [{title: 'address'}, {title: 'type'}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'share', numeric: true}],
      rows: s.leaks.map(l => [html`<code>${l.address}</code>`, objectKind(l), l.retainedBytes, l.retainedObjects, {value: l.share, text: percent(l.share)}]),
    })}`
  : ''}`
  return {id: 'suspects', title: 'Leak suspects', body}
}
