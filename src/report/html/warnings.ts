import type {WarningReport} from '../../queries/warning-report.js'
import {dataTable} from './data-table.js'
import {html, num} from './html.js'
import type {ReportSection} from './section.js'

/** Every warning of the analysis with its phase and addresses; what was not listed, counted. */
export function warningsSection(w: WarningReport): ReportSection {
  const omitted = Object.entries(w.omitted)
  const body = w.consistent
    ? html`<p class="ok">None: every list and counter is consistent.</p>`
    : html`<p class="bad">Not consistent: ${num(w.total)} warnings (${Object.entries(w.byPhase)
        .filter(([, n]) => n > 0)
        .map(([p, n]) => `${num(n)} ${p}`)
        .join(', ')}).</p>
${dataTable({
  id: 'warnings',
  filter: true,
  whole: 'toma analyze CORE --json',
  columns: [{title: 'phase'}, {title: 'kind'}, {title: 'addresses'}, {title: 'message'}],
  rows: w.list.map(x => [x.phase, x.kind, x.addresses.join(', '), x.message]),
})}
${omitted.map(([phase, n]) => html`<p class="more">[${phase}] … and ${num(n)} more not listed</p>`)}`
  return {id: 'warnings', title: `Warnings (${num(w.total)})`, body}
}
