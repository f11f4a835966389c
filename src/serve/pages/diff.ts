import {diffCores} from '../../queries/diff.js'
import {baselineSection} from '../../report/html/baseline.js'
import {html} from '../../report/html/html.js'
import {diffHref} from '../links.js'
import {once} from '../page-cache.js'
import type {ServeContext, ServedCore, ServePage} from '../serve-page.js'

/**
 * What changed since the baseline core, when `toma serve CORE BASELINE` was given one: the
 * report's baseline section over diffCores. The diff matches every object of both cores, so it is
 * computed once, on the first request, and kept.
 */
export const diffPage: ServePage = {
  path: diffHref(),
  nav: 'Diff',
  answer(ctx) {
    const baseline = ctx.baseline
    if (!baseline) {
      return {kind: 'page', title: 'Diff', body: html`<p>No baseline core: start the server with an earlier core of the same process as well, <code>toma serve ${ctx.core.corePath} EARLIER_CORE</code>, to see what was born, died and grew since.</p>`}
    }
    const section = diffSection(ctx, baseline)
    return {kind: 'page', title: section.title, body: section.body}
  },
  prepare(ctx) {
    if (ctx.baseline) diffSection(ctx, ctx.baseline)
  },
}

function diffSection(ctx: ServeContext, baseline: ServedCore) {
  return once(ctx.core, 'diff', () =>
    baselineSection(diffCores({index: baseline.index, program: baseline.program(), corePath: baseline.corePath}, {index: ctx.core.index, program: ctx.core.program(), corePath: ctx.core.corePath})),
  )
}
