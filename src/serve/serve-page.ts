import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import type {Html} from '../report/html/html.js'

/**
 * One core as `toma serve` holds it: its index, opened once, and its program (the core with its
 * module files), loaded on first use, since only the pages that read the core's bytes (an
 * object's hex dump, symbols of a root) need it.
 */
export interface ServedCore {
  index: HeapIndex
  corePath: string
  indexPath: string
  program(): Program
}

/** What every page is given: the core, the second core when `serve` was given two (the diff page), toma's version. */
export interface ServeContext {
  core: ServedCore
  baseline?: ServedCore
  toolVersion: string
}

/**
 * A page's answer. The server wraps a `page` in the common layout (navigation, search box, the
 * CSP and the page's scripts); `json` is sent as application/json (a page's lazy parts: a
 * dominator subtree's next children); `missing` is a 404 with its one-line reason shown in the
 * layout (an address that is no object, a class id out of range).
 */
export type PageAnswer =
  | {kind: 'page'; title: string; body: Html}
  | {kind: 'json'; value: unknown}
  | {kind: 'redirect'; location: string}
  | {kind: 'missing'; message: string}

/**
 * One page of the server: the path it answers (exactly, no prefix), the navigation entry when
 * it has one, and its answer to a request's URL (its query parameters are the page's state, so
 * that every view is a URL that can be bookmarked). Answers are computed from the index only for
 * what the page shows: lists are paged (`PAGE_ROWS` rows), never every object.
 */
export interface ServePage {
  path: string
  nav?: string
  /**
   * The navigation entry a page without one of its own belongs to (its path), highlighted while
   * the page is shown: a class's objects under Classes. The object page and the dominator tree
   * set theirs here too.
   */
  section?: string
  answer(ctx: ServeContext, url: URL): PageAnswer | Promise<PageAnswer>
  /**
   * Work the page does once for the whole server, done when the server starts, before its URL is
   * printed, and kept (page-cache.ts): only what no page could do within a request's time, which
   * is the diff of two cores (every object of both matched). Every other page answers from the
   * index on its first load: what it needs from every slot is counted by analyze, or counted once
   * and kept (span-slot-states.ts).
   */
  prepare?(ctx: ServeContext): void
}

/** Rows in one page of any list. */
export const PAGE_ROWS = 100
