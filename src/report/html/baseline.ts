import path from 'node:path'
import type {CoreDiff} from '../../queries/diff.js'
import {growthWords, signed, signedBytes, totalsLine} from '../diff-text.js'
import {dataTable} from './data-table.js'
import {html, num} from './html.js'
import {facts, type ReportSection} from './section.js'

/**
 * `toma report --baseline OLD`: what `toma diff OLD CORE` says, as a part of the report. The data
 * is diffCores()'s own; this only lays it out (types per born/died/kept/net, the holders that grew,
 * TCMalloc's bytes per state).
 */
export function baselineSection(d: CoreDiff): ReportSection {
  const whole = `toma diff ${d.before.core} ${d.after.core} --json`
  const net = (n: number, text: string) => ({value: n, text})
  const body = html`${facts([
    ['baseline', html`<code>${d.before.core}</code> (pid ${d.before.pid ?? '?'})`],
    ['this core', html`<code>${d.after.core}</code> (pid ${d.after.pid ?? '?'})`],
    ['program', d.executable ? html`<code>${d.executable.path}</code>${d.executable.buildId ? ` build-id ${d.executable.buildId}` : ''}` : '?'],
    ['in all', totalsLine(d)],
  ])}
${d.warnings.map(w => html`<p class="warn">warning: ${w}</p>`)}
<p class="dim">TCMalloc never moves an object: an object at the same address, in the same size class and of the same type in both cores is kept; a slot reused by another type counts as one died and one born. Objects without a vtable are counted per size class.</p>
<h3>Live objects by type: born, died, kept</h3>
${dataTable({
  id: 'baseline-types',
  filter: true,
  whole,
  columns: ['type', 'born', 'born bytes', 'died', 'died bytes', 'kept', 'kept bytes', 'net', 'net bytes'].map((title, i) => ({title, numeric: i > 0})),
  rows: d.types.map(t => [t.type, t.born.objects, t.born.bytes, t.died.objects, t.died.bytes, t.kept.objects, t.kept.bytes, net(t.net.objects, signed(t.net.objects)), net(t.net.bytes, signed(t.net.bytes))]),
})}
<h3>Kept objects whose retained size grew most</h3>
${
  d.growth.length === 0
    ? html`<p>None grew.</p>`
    : html`<ol id="baseline-growth" class="growth">${d.growth.map(g => {
        const w = growthWords(g)
        return html`<li><b>${w.growth}</b> ${w.holder} <span class="dim">${w.retained}</span></li>`
      })}</ol>
<p class="dim">${num(d.keptGrown)} kept objects grew; each is counted under its holder, the outermost kept object above it in the dominator tree that grew too. The field is its offset in the holder (names need debug info toma does not read).</p>`
}
<h3>TCMalloc: bytes per state</h3>
${dataTable({
  id: 'baseline-states',
  columns: [{title: 'state'}, ...['bytes before', 'bytes after', 'change', 'objects before', 'objects after'].map(title => ({title, numeric: true}))],
  rows: d.states.map(s => [s.state, s.before.bytes, s.after.bytes, net(s.change.bytes, signedBytes(s.change.bytes)), s.before.objects, s.after.objects]),
})}`
  return {id: 'baseline', title: `Compared with ${path.basename(d.before.core)}`, body}
}
