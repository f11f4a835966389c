import type {ServePage} from '../serve-page.js'
import {overviewPage} from './overview.js'
import {objectPage} from './object.js'
import {dominatorsPage} from './dominators.js'
import {dominatedJsonPage} from './dominated-json.js'

/**
 * Every page of the server, in the navigation's order: one entry a page (the server answers
 * these paths exactly and nothing else but its static files).
 */
export const SERVE_PAGES: ServePage[] = [
  overviewPage,
  dominatorsPage,
  objectPage,
  dominatedJsonPage,
]
