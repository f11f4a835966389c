import {hex} from '../errors.js'

/**
 * Every URL one page gives to another, made in one place: pages link to each other only through
 * these, so that a path or parameter name changes here alone. Addresses are hex (`0x…`); a class
 * is its type-name id in the index (`-1`: objects no tier named).
 */
function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `${path}?${s}` : path
}

export const overviewHref = (): string => '/'
export const classesHref = (p: {filter?: string; sort?: string; page?: number} = {}): string => withQuery('/classes', p)
/** A class's live objects, a page from slot `from` on (a cursor: the page's first slot; absent, the first page). */
export const classHref = (typeId: number, from?: number): string => withQuery('/class', {id: typeId, from})
/** The live objects no tier named in spans of one size class (0: large objects), a page from slot `from` on. */
export const untypedClassHref = (sizeClass: number, from?: number): string => withQuery('/class', {id: -1, sizeClass, from})
export const objectHref = (address: number, view: ObjectView = {}): string => withQuery('/object', {addr: hex(address), ...view})
/** An object page's parts beyond their first view: bytes of the dump, the page (from 1) of referrers (`in`), referents (`out`), dominated children (`kids`). */
export interface ObjectView {
  bytes?: number
  in?: number
  out?: number
  kids?: number
}
/** The dominator tree from the top (no id), or the subtree under one object (its slot index). */
export const dominatorsHref = (slot?: number): string => withQuery('/dominators', {id: slot})
/** JSON: a page (from 1) of `PAGE_ROWS` children of a dominator-tree node, largest retained first (`id` absent: the roots of the tree). */
export const dominatedJsonHref = (slot: number | undefined, page?: number): string => withQuery('/api/dominated', {id: slot, page})
export const searchHref = (q: string): string => withQuery('/search', {q})
export const leaksHref = (page?: number): string => withQuery('/leaks', {page: page && page > 1 ? page : undefined})
export const suspectsHref = (): string => '/suspects'
export const threadsHref = (): string => '/threads'
export const memoryHref = (): string => '/memory'
export const damageHref = (): string => '/damage'
export const diffHref = (): string => '/diff'
/** The pages' own script and the report's table script, served from the same origin (CSP `script-src 'self'`). */
export const SCRIPT_PATHS = {serve: '/static/serve.js', report: '/static/report.js'} as const
/** The report's styles with the server's own, one file (CSP `style-src 'self'`). */
export const STYLE_PATH = '/static/style.css'
