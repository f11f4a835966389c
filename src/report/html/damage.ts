import {Chalk} from 'chalk'
import type {HeapDamage} from '../../queries/heap-damage.js'
import {damageLines, hasDamageNews} from '../damage.js'
import {html} from './html.js'
import type {ReportSection} from './section.js'

/** The "Heap damage" section: what `toma damage` prints, when there is damage, a crash or a thread inside TCMalloc. */
export function damageSection(d: HeapDamage | undefined): ReportSection[] {
  if (!d || !hasDamageNews(d)) return []
  const lines = damageLines(d, new Chalk({level: 0}))
  const bad = d.findings.some(f => !f.inFlight)
  return [
    {
      id: 'damage',
      title: `Heap damage (${d.findings.length + d.omitted})`,
      body: html`<p class="${bad ? 'bad' : 'ok'}">${bad ? 'TCMalloc\'s lists are damaged: each finding names the structure, the slot and the value found there.' : 'No damaged list; the process was caught inside TCMalloc or crashed.'}</p>
<pre>${lines.join('\n')}</pre>`,
    },
  ]
}
