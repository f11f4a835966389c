import {classCounts} from '../../queries/classes.js'
import {bytes} from '../../report/table.js'
import {dataTable} from '../../report/html/data-table.js'
import {html, num} from '../../report/html/html.js'
import {classHref, classesHref, untypedClassHref} from '../links.js'
import {pagerLine} from '../pager.js'
import {choiceParam, intParam, textParam} from '../params.js'
import {PAGE_ROWS, type ServePage} from '../serve-page.js'
import {typeIdOf} from '../type-ids.js'

const SORTS = ['bytes', 'objects', 'retained', 'name'] as const
type Sort = (typeof SORTS)[number]

type ClassRow = ReturnType<typeof classCounts>['types'][number]
const ORDER: Record<Sort, (a: ClassRow, b: ClassRow) => number> = {
  bytes: (a, b) => b.bytes - a.bytes,
  objects: (a, b) => b.objects - a.objects,
  retained: (a, b) => (b.retainedBytes ?? 0) - (a.retainedBytes ?? 0),
  name: (a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0),
}

/**
 * Live objects and bytes per name, sorted (`sort=`) and filtered (`filter=`, a part of the name)
 * by the server and paged; each name opens its objects. From the counts analyze kept per name id
 * (a few KiB), never a pass over the objects. The objects no tier named follow, per size class.
 */
export const classesPage: ServePage = {
  path: '/classes',
  nav: 'Classes',
  answer(ctx, url) {
    const index = ctx.core.index
    const sort = choiceParam(url, 'sort', SORTS, 'bytes')
    const filter = textParam(url, 'filter')
    const counts = classCounts(index)
    const wanted = filter.toLowerCase()
    const rows = counts.types.filter(t => !wanted || t.type.toLowerCase().includes(wanted)).sort(ORDER[sort])
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS))
    const page = intParam(url, 'page', 1, pages) ?? 1
    const shown = rows.slice((page - 1) * PAGE_ROWS, page * PAGE_ROWS)
    const here = (p: {sort?: Sort; page?: number}) => classesHref({filter, sort: (p.sort ?? sort) === 'bytes' ? undefined : p.sort ?? sort, page: p.page && p.page > 1 ? p.page : undefined})
    const nameCell = (t: ClassRow) => {
      const id = typeIdOf(index, t.type)
      return id === undefined ? t.type : html`<a href="${classHref(id)}">${t.type}</a>`
    }
    const sortLinks = html`<span class="dim">sort by</span> ${SORTS.map(s => (s === sort ? html`<b>${s}</b> ` : html`<a href="${here({sort: s, page: 1})}">${s}</a> `))}`
    const body = html`<form class="list-filter" action="${classesHref()}" method="get"><input type="search" name="filter" value="${filter}" placeholder="part of a name" aria-label="filter by name">${sort === 'bytes' ? '' : html`<input type="hidden" name="sort" value="${sort}">`}<button type="submit">filter</button> ${sortLinks}</form>
<p class="dim">${num(rows.length)} of ${num(counts.types.length)} names${filter ? html` contain “${filter}”` : ''}; retained: the bytes the class's objects keep alive, each byte once.${counts.graph ? '' : ' No retained sizes: the index holds the heap model only.'}</p>
${dataTable({
  id: 'classes',
  max: PAGE_ROWS,
  columns: [{title: 'objects', numeric: true}, {title: 'bytes', numeric: true}, {title: 'retained', numeric: true}, {title: 'via'}, {title: 'name'}],
  rows: shown.map(t => [t.objects, {value: t.bytes, text: bytes(t.bytes)}, t.retainedBytes === null ? '-' : {value: t.retainedBytes, text: bytes(t.retainedBytes)}, t.via, nameCell(t)]),
})}
${pagerLine({first: (page - 1) * PAGE_ROWS, shown: shown.length, total: rows.length, prevHref: page > 1 ? here({page: page - 1}) : undefined, nextHref: page < pages ? here({page: page + 1}) : undefined})}
<h2>Live objects without a name, by size class</h2>
${dataTable({
  id: 'untyped',
  columns: [{title: 'size class'}, {title: 'size', numeric: true}, {title: 'objects', numeric: true}, {title: 'bytes', numeric: true}],
  rows: counts.untyped.map(u => [html`<a href="${untypedClassHref(u.sizeClass)}">${u.sizeClass === 0 ? 'large' : `class ${u.sizeClass}`}</a>`, u.size === null ? 'pages' : u.size, u.objects, {value: u.bytes, text: bytes(u.bytes)}]),
})}`
    return {kind: 'page', title: 'Classes', body}
  },
}
