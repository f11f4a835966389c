import type {classCounts} from '../../queries/classes.js'
import {dataTable} from './data-table.js'
import {html} from './html.js'
import type {ReportSection} from './section.js'

/** Live and retained bytes per type (sortable, filterable), and the untyped objects by size class. */
export function classesSection(c: ReturnType<typeof classCounts>): ReportSection {
  const body = html`<p class="dim">Live objects per name: a C++ type (by vtable or debug information), a standard-library structure, a runtime's object; <em>via</em> says how each was known. Retained: what the name's objects keep alive, each byte once. Click a header to sort; type to filter.</p>
${dataTable({
  id: 'classes',
  filter: true,
  whole: 'toma classes --json',
  columns: [{title: 'name'}, {title: 'objects', numeric: true}, {title: 'live bytes', numeric: true}, {title: 'retained bytes', numeric: true}, {title: 'retained objects', numeric: true}, {title: 'via'}],
  rows: c.types.map(t => [t.type, t.objects, t.bytes, t.retainedBytes ?? '-', t.retainedObjects ?? '-', t.via]),
})}
<h3>Live objects without a name, by size class</h3>
${dataTable({
  id: 'untyped',
  whole: 'toma classes --json',
  columns: [{title: 'class', numeric: true}, {title: 'size', numeric: true}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}],
  rows: c.untyped.map(u => [u.sizeClass === 0 ? {value: 0, text: 'large'} : u.sizeClass, u.size === null ? {value: 0, text: 'pages'} : u.size, u.objects, u.bytes]),
})}`
  return {id: 'classes', title: 'Classes', body}
}
