import type {ServePage} from '../serve-page.js'
import {classPage} from './class.js'
import {classesPage} from './classes.js'
import {diffPage} from './diff.js'
import {leaksPage} from './leaks.js'
import {overviewPage} from './overview.js'
import {damagePage, memoryPage, suspectsPage, threadsPage} from './report-sections.js'
import {searchPage} from './search.js'
import {objectPage} from './object.js'
import {dominatorsPage} from './dominators.js'
import {dominatedJsonPage} from './dominated-json.js'

/**
 * Every page of the server, in the navigation's order: one entry a page (the server answers
 * these paths exactly and nothing else but its static files).
 */
export const SERVE_PAGES: ServePage[] = [
  overviewPage,
  classesPage,
  classPage,
  dominatorsPage,
  leaksPage,
  suspectsPage,
  threadsPage,
  memoryPage,
  damagePage,
  diffPage,
  searchPage,
  objectPage,
  dominatedJsonPage,
]
