import {RetentionIndex} from '../../index/retention-index.js'
import {classObjects, untypedObjectsOfSizeClass} from '../../queries/class-objects.js'
import {bytes} from '../../report/table.js'
import {dataTable} from '../../report/html/data-table.js'
import {html, num} from '../../report/html/html.js'
import {hex} from '../../errors.js'
import {classHref, classesHref, objectHref, untypedClassHref} from '../links.js'
import {pagerLine} from '../pager.js'
import {intParam} from '../params.js'
import {PAGE_ROWS, type ServePage} from '../serve-page.js'

/** Size classes a span may have (a byte). */
const SIZE_CLASSES = 256

/**
 * One class's live objects, a page at a time in address order, each a link to its object page:
 * `id` a name id (the classes page's links), or -1 with `sizeClass` for the objects no tier named
 * in spans of that size class. Paged by a slot cursor (`from`), so a page costs the slots scanned
 * to fill it, not the pages before it.
 */
export const classPage: ServePage = {
  path: '/class',
  section: classesHref(),
  answer(ctx, url) {
    const index = ctx.core.index
    const names = index.meta.typeNames.length
    const id = intParam(url, 'id', -1, names)
    if (id === undefined) return {kind: 'missing', message: 'which class? (id=N, from the classes page)'}
    const from = intParam(url, 'from', 0, index.objectCount) ?? 0
    const counts = index.nameCounts()
    let title: string
    let total: number
    let page
    let href: (from?: number) => string
    if (id > 0) {
      title = index.typeName(id)!
      total = counts['type.liveObjects'][id]!
      page = classObjects(index, id, from, PAGE_ROWS)
      href = f => classHref(id, f)
    } else {
      const sizeClass = intParam(url, 'sizeClass', 0, SIZE_CLASSES - 1)
      if (sizeClass === undefined) return {kind: 'missing', message: 'objects without a name are listed per size class (sizeClass=N, from the classes page)'}
      title = `no name, ${sizeClass === 0 ? 'large objects' : `size class ${sizeClass} (${num(index.meta.sizeClassSizes[sizeClass] ?? 0)} B)`}`
      total = counts['sizeClass.untypedObjects'][sizeClass] ?? 0
      page = untypedObjectsOfSizeClass(index, sizeClass, from, PAGE_ROWS)
      href = f => untypedClassHref(sizeClass, f)
    }
    const slots = Uint32Array.from(page.slots)
    const retention = index.holds('graph') ? new RetentionIndex(index) : null
    const retained = retention?.retainedBytesOf(slots)
    const retainedObjects = retention?.retainedObjectsOf(slots)
    const rows = page.slots.map((slot, i) => {
      const o = index.object(slot)
      return [
        html`<a href="${objectHref(o.start)}"><code>${hex(o.start)}</code></a>`,
        o.size,
        retained ? {value: retained[i]!, text: bytes(retained[i]!)} : '-',
        retainedObjects ? retainedObjects[i]! : '-',
        index.reachability(slot),
      ]
    })
    const body = html`<p>${num(total)} live objects${id > 0 ? html`, ${bytes(counts['type.liveBytes'][id]!)}` : ''}; in address order${from > 0 ? html`, from slot ${num(from)}` : ''}.</p>
${dataTable({
  id: 'class-objects',
  max: PAGE_ROWS,
  columns: [{title: 'address'}, {title: 'size', numeric: true}, {title: 'retained', numeric: true}, {title: 'objects retained', numeric: true}, {title: 'reached'}],
  rows,
})}
${pagerLine({shown: rows.length, firstHref: from > 0 ? href() : undefined, nextHref: page.next === null ? undefined : href(page.next)})}`
    return {kind: 'page', title: `Class ${title}`, body}
  },
}
