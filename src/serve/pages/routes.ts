import type {ServePage} from '../serve-page.js'
import {overviewPage} from './overview.js'

/**
 * Every page of the server, in the navigation's order: one entry a page (the server answers
 * these paths exactly and nothing else but its static files).
 */
export const SERVE_PAGES: ServePage[] = [
  overviewPage,
]
