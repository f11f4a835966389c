import {PAGE_SCRIPT} from '../report/html/script.js'
import {PAGE_STYLE} from '../report/html/style.js'
import {SERVE_SCRIPT} from './client-script.js'
import {SCRIPT_PATHS, STYLE_PATH} from './links.js'
import {SERVE_STYLE} from './serve-style.js'
import {OBJECT_STYLE} from './object-style.js'

/**
 * The only files the server sends besides its pages: texts compiled into toma, each at one fixed
 * path. No path from a URL ever reaches the file system.
 */
export const STATIC_FILES: ReadonlyMap<string, {type: string; body: string}> = new Map([
  [SCRIPT_PATHS.report, {type: 'text/javascript; charset=utf-8', body: PAGE_SCRIPT}],
  [SCRIPT_PATHS.serve, {type: 'text/javascript; charset=utf-8', body: SERVE_SCRIPT}],
  [STYLE_PATH, {type: 'text/css; charset=utf-8', body: PAGE_STYLE + SERVE_STYLE + OBJECT_STYLE}],
])
