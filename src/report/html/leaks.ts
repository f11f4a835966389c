import type {Leaks} from '../../queries/leaks.js'
import type {Sighting} from '../../index/sighting-index.js'
import {bytes} from '../table.js'
import {ALLOCATOR_OWN_EXAMPLES, objectKind, sightingText} from '../wording.js'
import {dataTable} from './data-table.js'
import {leakKinds} from '../held-memory-text.js'
import {html, num} from './html.js'
import type {ReportSection} from './section.js'

/** Sightings listed per leaked object (a block copied around by many calls has many). */
const SIGHTINGS = 3

function lastSeen(list: Sighting[]): string {
  const shown = list.slice(0, SIGHTINGS).map(sightingText)
  return [...shown, ...(list.length > shown.length ? [`… ${num(list.length - shown.length)} more`] : [])].join('; ')
}

/** Leaked objects grouped by where each leaked structure starts, by type, and the largest ones. */
export function leaksSection(l: Leaks): ReportSection {
  const own = l.allocatorInternal
  // The largest leaked objects the starts do not list already (a leak of single blocks is all starts).
  const listed = new Set(l.starts.map(o => o.address))
  const more = l.largest.filter(o => !listed.has(o.address))
  const body = html`<p>${num(l.objects)} live objects (${bytes(l.bytes)}) are reachable from no root.${own.objects ? html` <span class="dim">Not counted: ${num(own.objects)} unreferenced allocations of TCMalloc itself (${bytes(own.bytes)}, ${ALLOCATOR_OWN_EXAMPLES}).</span>` : ''}</p>
${l.objects === 0
  ? ''
  : html`<h3>Where leaked structures start (nothing else leaked points to them)</h3>
${dataTable({
  id: 'leak-starts',
  filter: true,
  total: l.startCount,
  whole: 'toma leaks --json --limit 100000',
  columns: [{title: 'address'}, {title: 'type'}, {title: 'size', numeric: true}, {title: 'retained', numeric: true}, {title: 'objects', numeric: true}, {title: 'pointed to by', numeric: true}, {title: 'last seen'}],
  rows: l.starts.map(o => [html`<code>${o.address}</code>`, objectKind(o), o.size, o.retainedBytes, o.retainedObjects, o.pointedToBy, lastSeen(o.lastSeen)]),
})}
<h3>Leaked objects by type${l.untypedGroups.length ? ', and untyped blocks by size and holder' : ''}</h3>
${dataTable({
  id: 'leak-types',
  columns: [{title: 'type'}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}],
  rows: leakKinds(l).map(k => [k.kind, k.objects, k.bytes]),
})}
${more.length
  ? html`<h3>Largest leaked objects not listed above</h3>
${dataTable({
  id: 'leaks-largest',
  total: l.objects - l.starts.length,
  whole: 'toma leaks --json --limit 100000',
  columns: [{title: 'address'}, {title: 'id', numeric: true}, {title: 'size', numeric: true}, {title: 'pointed to by', numeric: true}, {title: 'points to', numeric: true}, {title: 'type'}],
  rows: more.map(o => [html`<code>${o.address}</code>`, o.id, o.size, o.pointedToBy, o.pointsTo, o.type ?? '(untyped)']),
})}`
  : ''}`}`
  return {id: 'leaks', title: 'Leaks', body}
}
