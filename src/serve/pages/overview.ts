import {RetentionIndex} from '../../index/retention-index.js'
import type {HeapSummary} from '../../queries/heap-summary.js'
import {REPORT_LIMITS} from '../../queries/report-data.js'
import {topObjects} from '../../queries/top.js'
import {damageSection} from '../../report/html/damage.js'
import {retainedTreemap} from '../../report/html/held-memory.js'
import {html} from '../../report/html/html.js'
import {crossCheckSection, overviewSection, statesSection} from '../../report/html/overview.js'
import {warningsSection} from '../../report/html/warnings.js'
import {sectionsHtml} from '../layout.js'
import {classHref, dominatorsHref, objectHref} from '../links.js'
import type {ServePage} from '../serve-page.js'
import {typeIdOf} from '../type-ids.js'

/**
 * The first page: the core and allocator, bytes per state, the cross-check, damage, the treemap
 * of retained memory (each box a link to its object, each type's box to its class, the rest to
 * the dominator tree) and the warnings. All from the index's summary and its ranked top.
 */
export const overviewPage: ServePage = {
  path: '/',
  nav: 'Overview',
  answer(ctx) {
    const index = ctx.core.index
    const s = index.meta.summary as unknown as HeapSummary
    const treemap = index.holds('graph')
      ? retainedTreemap(topObjects(index, new RetentionIndex(index), REPORT_LIMITS.topObjects), {
          object: o => objectHref(Number(o.address)),
          rest: dominatorsHref(),
          group: g => {
            const id = typeIdOf(index, g)
            return id === undefined ? undefined : classHref(id)
          },
        })
      : html`<p>No retained sizes: the index holds the heap model only (run toma analyze on the core).</p>`
    const body = html`${sectionsHtml([overviewSection(s), statesSection(s)])}
<section id="section-retained"><h2>What retains the memory</h2>
${treemap}
</section>
${sectionsHtml([crossCheckSection(s), ...damageSection(s.damage), warningsSection(s.warnings)])}`
    return {kind: 'page', title: 'Overview', body}
  },
}
