import {RetentionIndex} from '../../index/retention-index.js'
import type {HeapSummary} from '../../queries/heap-summary.js'
import {REPORT_LIMITS} from '../../queries/report-data.js'
import {topObjects} from '../../queries/top.js'
import {damageSection} from '../../report/html/damage.js'
import {retainedTreemap} from '../../report/html/held-memory.js'
import {html, num} from '../../report/html/html.js'
import {facts} from '../../report/html/section.js'
import {statesBarSvg} from '../../report/html/states-bar.js'
import {bytes} from '../../report/table.js'
import {percent} from '../../report/wording.js'
import {crossCheckSection, overviewSection, statesSection} from '../../report/html/overview.js'
import {warningsSection} from '../../report/html/warnings.js'
import {sectionsHtml} from '../layout.js'
import {classHref, dominatorsHref, objectHref} from '../links.js'
import type {ServePage} from '../serve-page.js'
import {typeIdOf} from '../type-ids.js'

/**
 * The first page: damage, then at a glance the verdict, live, named and leaked bytes and the bytes
 * per state, the treemap of retained memory (each box a link to its object, each type's box to its
 * class, the rest to the dominator tree); then the core and allocator, the states, the cross-check
 * and the warnings in detail. All from the index's summary and its ranked top.
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
    // Damage first when there is some, then what a first look wants: where the bytes are and what
    // holds them; the core's and allocator's details after.
    const live = s.states.find(x => x.state === 'live')
    const glance = facts([
      ['verdict', s.warnings.consistent ? html`<span class="ok">consistent: no warning, every cross-check figure equal</span>` : html`<span class="bad">not consistent: ${num(s.warnings.total)} warnings (below)</span>`],
      ['live', live ? `${num(live.objects)} objects, ${bytes(live.bytes)}` : '?'],
      ['named', s.graph ? `${percent(s.names.namedShare)} of live bytes, ${num(s.names.distinctNames)} distinct names` : 'by vtable only (the index holds the heap model only)'],
      ['leaked', s.graph ? `${num(s.graph.unreachable.objects)} objects, ${bytes(s.graph.unreachable.bytes)}` : '?'],
    ])
    const body = html`${sectionsHtml([...damageSection(s.damage)])}
<section id="section-glance"><h2>At a glance</h2>
${glance}
${statesBarSvg(s.states)}
</section>
<section id="section-retained"><h2>What retains the memory</h2>
${treemap}
</section>
${sectionsHtml([overviewSection(s), statesSection(s), crossCheckSection(s), warningsSection(s.warnings)])}`
    return {kind: 'page', title: 'Overview', body}
  },
}
