import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {childrenPage, RANK_AT_MOST} from '../queries/dominated.js'
import {html, num, type Html} from '../report/html/html.js'
import {count} from '../report/wording.js'
import {dominatedJsonHref, objectHref} from './links.js'
import {objectName} from './object-link.js'
import {PAGE_ROWS} from './serve-page.js'
import {BadParameter} from './params.js'

/** One node of the dominator tree as a page lists it and `/api/dominated` sends it. */
export interface DominatedRow {
  slot: number
  address: string
  name: string
  size: number
  retainedBytes: number
  retainedObjects: number
  childCount: number
  /** Its object page. */
  href: string
  /** Its children's first page (JSON), null for a leaf. */
  childrenHref: string | null
}

/** A page of a node's children (`parent` null: the tree's top), largest retained first, and where the next page is. */
export interface DominatedPage {
  parent: number | null
  page: number
  /** Children in all. */
  count: number
  /** Why the rows are not by size (too many children to rank in a page's time), null when they are. */
  note: string | null
  rows: DominatedRow[]
  /** The next page (JSON), null on the last, and its button's words. */
  next: string | null
  nextLabel: string | null
}

export function dominatedPage(index: HeapIndex, retention: RetentionIndex, parent: number | null, page: number): DominatedPage {
  const count = retention.childCount(parent)
  if (page > 0 && page * PAGE_ROWS >= count) throw new BadParameter(`page=${page + 1}: past the last page (${num(count)} children, ${PAGE_ROWS} a page)`)
  const {children, ranked} = childrenPage(retention, parent, page, PAGE_ROWS)
  const rows = children.map(c => {
    const o = index.object(c.id)
    const childCount = retention.childCount(c.id)
    return {slot: c.id, address: hex(o.start), name: objectName(index, c.id), size: o.size, retainedBytes: c.bytes, retainedObjects: c.objects, childCount, href: objectHref(o.start), childrenHref: childCount > 0 ? dominatedJsonHref(c.id) : null}
  })
  const after = count - (page + 1) * PAGE_ROWS
  const note = ranked || page > 0 ? null : `${num(count)} children, more than ${num(RANK_AT_MOST)}: not ranked by size past ${parent === null ? 'the largest ' + num(retention.topCount()) : 'the largest'}; the others by address`
  return {parent, page, count, note, rows, next: after > 0 ? dominatedJsonHref(parent ?? undefined, page + 2) : null, nextLabel: after > 0 ? `next ${num(Math.min(PAGE_ROWS, after))} of ${num(after)} more` : null}
}

/**
 * The rows as a list the served script expands in place: a node with children has a button that
 * fetches them (its `childrenHref`), and a page that is not the last ends in a button that fetches
 * the next. The script (client-script.ts) builds the same markup from the JSON.
 */
export function dominatedListHtml(p: DominatedPage): Html {
  return html`<ul class="domtree">${p.note ? html`<li class="dim dom-note">${p.note}</li>` : ''}${p.rows.map(dominatedRowHtml)}${p.next ? moreButton(p) : ''}</ul>`
}

function dominatedRowHtml(r: DominatedRow): Html {
  const toggle = r.childrenHref ? html`<button type="button" class="dom-expand" data-href="${r.childrenHref}" aria-expanded="false" title="${count(r.childCount, 'child', 'children')}">+</button>` : html`<span class="dom-leaf">·</span>`
  return html`<li data-slot="${r.slot}">${toggle} <a href="${r.href}"><code>${r.address}</code></a> ${r.name} <span class="dim">${num(r.size)} B</span> retains <b>${num(r.retainedBytes)} B</b> in ${count(r.retainedObjects, 'object')}${r.childCount ? html` <span class="dim">(${count(r.childCount, 'child', 'children')})</span>` : ''}</li>`
}

function moreButton(p: DominatedPage): Html {
  return html`<li class="dom-more-line"><button type="button" class="dom-more" data-href="${p.next!}">${p.nextLabel!}</button></li>`
}
