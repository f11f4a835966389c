import {RetentionIndex} from '../../index/retention-index.js'
import type {HeapSummary} from '../../queries/heap-summary.js'
import {memoryReport} from '../../queries/memory.js'
import {REPORT_LIMITS} from '../../queries/report-data.js'
import {suspectsOf} from '../../queries/suspects.js'
import {stackOf, threadsOf} from '../../queries/threads.js'
import {damageSection} from '../../report/html/damage.js'
import {html} from '../../report/html/html.js'
import {suspectsSection} from '../../report/html/held-memory.js'
import {memorySection} from '../../report/html/memory.js'
import type {ReportSection} from '../../report/html/section.js'
import {threadsSection} from '../../report/html/threads.js'
import {damageHref, memoryHref, suspectsHref, threadsHref} from '../links.js'
import {once} from '../page-cache.js'
import type {ServeContext, ServePage} from '../serve-page.js'

/**
 * A page that is one of the report's sections, from the same query with the report's limits:
 * computed on the first request and kept (page-cache.ts).
 */
function sectionPage(path: string, nav: string, section: (ctx: ServeContext) => ReportSection | null, none: string): ServePage {
  return {
    path,
    nav,
    answer(ctx) {
      const s = once(ctx.core, path, () => section(ctx))
      return {kind: 'page', title: s?.title ?? nav, body: s ? s.body : html`<p>${none}</p>`}
    },
  }
}

const graphOnly = (ctx: ServeContext) => ctx.core.index.holds('graph')

export const suspectsPage = sectionPage(suspectsHref(), 'Suspects', ctx => (graphOnly(ctx) ? suspectsSection(suspectsOf(ctx.core.program(), ctx.core.index, new RetentionIndex(ctx.core.index), REPORT_LIMITS.suspectThreshold)) : null), 'No retained sizes: the index holds the heap model only (run toma analyze on the core).')

export const threadsPage = sectionPage(threadsHref(), 'Threads', ctx => {
  const program = ctx.core.program()
  const threads = threadsOf(program, ctx.core.index)
  return threadsSection(threads, threads.threads.slice(0, REPORT_LIMITS.stacks).map(t => stackOf(program, ctx.core.index, t.tid)))
}, '')

// Where the memory went passes over every slot's state once (span-slot-states.ts), on the page's
// first load: some 0.2 s at 30 M slots.
export const memoryPage = sectionPage(memoryHref(), 'Memory', ctx => memorySection(memoryReport(ctx.core.program(), ctx.core.index, {examples: 0, splitters: REPORT_LIMITS.splitters})), '')

export const damagePage = sectionPage(damageHref(), 'Damage', ctx => damageSection((ctx.core.index.meta.summary as unknown as HeapSummary).damage)[0] ?? null, 'No damage: no allocator list or structure was found broken, and no thread was inside the allocator.')
