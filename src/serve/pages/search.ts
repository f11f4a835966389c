import {hex, TomaError} from '../../errors.js'
import {parseAddress} from '../../core/parse-address.js'
import {describeAddress, placeLabel} from '../../program/describe-address.js'
import {classCounts} from '../../queries/classes.js'
import {bytes} from '../../report/table.js'
import {html, num, type Html} from '../../report/html/html.js'
import {classHref, classesHref, objectHref} from '../links.js'
import {textParam} from '../params.js'
import {PAGE_ROWS, type ServeContext, type ServePage} from '../serve-page.js'
import {typeIdOf} from '../type-ids.js'

/** Text that is meant as an address (0x… hexadecimal or decimal digits), to be parsed as toma's commands parse one. */
const ADDRESS_LIKE = /^(0x[0-9a-f]+|[0-9]+)$/i

/** Where an address lies when no heap object holds it: a thread's stack, a module's symbol or section, a mapping, nothing. */
function placeOf(ctx: ServeContext, addr: number): string {
  const program = ctx.core.program()
  return placeLabel(describeAddress(program, addr), program.core.arch.sp)
}

/** A symbol of the program by its exact name: its address, where that is, and the heap object its word points to, if any. */
function symbolAnswer(ctx: ServeContext, name: string): Html | null {
  const program = ctx.core.program()
  const found = program.symbolAddress(name)
  if (!found) return null
  const index = ctx.core.index
  const held = index.objectAt(found.address)
  if (held) return html`<p>Symbol <code>${name}</code> is at <a href="${objectHref(held.start)}"><code>${hex(found.address)}</code></a>, inside a heap object.</p>`
  const word = program.core.memory.readU64(found.address)
  const target = word === undefined ? undefined : index.objectAt(word)
  return html`<p>Symbol <code>${name}</code> is at <code>${hex(found.address)}</code>: ${placeOf(ctx, found.address)}.${target ? html` Its first word, <code>${hex(word!)}</code>, points into the heap object at <a href="${objectHref(target.start)}"><code>${hex(target.start)}</code></a>.` : ''}</p>`
}

/**
 * The search box's answer. An address goes to the object that holds it (a redirect), or says
 * where it lies if no heap object does; other text lists the names that contain it (each a link
 * to its class) and the program's symbol of exactly that name (its address, and the heap object
 * its word points to).
 */
export const searchPage: ServePage = {
  path: '/search',
  answer(ctx, url) {
    const q = textParam(url, 'q')
    if (!q) return {kind: 'page', title: 'Search', body: html`<p>Search for an address (<code>0x…</code> or decimal), a part of a type's name, or a symbol's exact name.</p>`}
    const index = ctx.core.index
    if (ADDRESS_LIKE.test(q.trim())) {
      let addr: number
      try {
        addr = parseAddress(q)
      } catch (e) {
        if (!(e instanceof TomaError)) throw e
        return {kind: 'page', title: `Search: ${q}`, body: html`<p>${e.message}</p>`}
      }
      const o = index.objectAt(addr)
      if (o) return {kind: 'redirect', location: objectHref(o.start)}
      return {kind: 'page', title: `Search: ${q}`, body: html`<p><code>${hex(addr)}</code> is in no heap object slot: ${placeOf(ctx, addr)}.</p>`}
    }
    const wanted = q.toLowerCase()
    const names = classCounts(index).types.filter(t => t.type.toLowerCase().includes(wanted))
    const shown = names.slice(0, PAGE_ROWS)
    const symbol = symbolAnswer(ctx, q)
    const body = html`${symbol ?? ''}
<h2>Names containing “${q}” (${num(names.length)})</h2>
${names.length === 0
  ? html`<p class="dim">No live object has such a name.</p>`
  : html`<ul>${shown.map(t => {
      const id = typeIdOf(index, t.type)
      return html`<li>${id === undefined ? t.type : html`<a href="${classHref(id)}">${t.type}</a>`} <span class="dim">${num(t.objects)} objects, ${bytes(t.bytes)}</span></li>`
    })}</ul>${names.length > shown.length ? html`<p class="more">… ${num(names.length - shown.length)} more: <a href="${classesHref({filter: q})}">all on the classes page</a></p>` : ''}`}
${symbol ? '' : html`<p class="dim">No symbol is named exactly “${q}” (symbols are searched by their exact, mangled name).</p>`}`
    return {kind: 'page', title: `Search: ${q}`, body}
  },
}
