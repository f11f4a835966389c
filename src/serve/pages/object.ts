import {hex} from '../../errors.js'
import {nptlThreads} from '../../program/nptl.js'
import {unwindThread} from '../../program/unwind.js'
import {MIN_DUMP_BYTES, objectInfo} from '../../queries/object-info.js'
import {pathsTo} from '../../queries/paths.js'
import type {Allocation} from '../../queries/allocations.js'
import {html, num, type Html} from '../../report/html/html.js'
import {byteSize, offset} from '../../report/wording.js'
import {dominatedListHtml, dominatedPage} from '../dominated-rows.js'
import {hexDumpHtml, MAX_PAGE_DUMP_BYTES, objectDump, PAGE_DUMP_BYTES} from '../hex-dump.js'
import {dominatorsHref, objectHref, type ObjectView} from '../links.js'
import {objectHeaderHtml} from '../object-header.js'
import {objectName} from '../object-link.js'
import {pathHtml} from '../object-path.js'
import {edgeTableHtml, referentsPage, referrersPage, rootsHtml} from '../object-refs.js'
import {addressParam, intParam, pageParam, urlPage} from '../params.js'
import {retentionOf} from '../served-retention.js'
import type {ServePage} from '../serve-page.js'

/**
 * `/object?addr=0x…`: the heap object holding an address (any address inside it), or where a
 * non-heap address is. Its facts, its bytes with every pointer word a link, who points to it
 * (objects and roots) and what it points to, its path from a root, its dominator subtree and its
 * allocation stack when TCMalloc sampled it. Every list is one page; the URL says which
 * (`bytes`, `in`, `out`, `kids`), so that every view is a link.
 */
export const objectPage: ServePage = {
  path: '/object',
  // Before the first request: the threads unwound and their descriptors read (a stack root's frame
  // is named from them, root-label.ts; on the 30 M-object core 80 to 490 ms, once per program),
  // and the span table read whole with its slot blocks (an edge's offsets are found through them,
  // edge-offsets.ts; 17 to 26 ms there).
  prepare(ctx) {
    const program = ctx.core.program()
    nptlThreads(program)
    for (const t of program.core.threads) unwindThread(program, t)
    const index = ctx.core.index
    if (index.objectCount > 0 && index.objects) index.objectBounds(0, new Float64Array(1), new Float64Array(1), 0)
  },
  answer(ctx, url) {
    const address = addressParam(url)
    const bytes = intParam(url, 'bytes', MIN_DUMP_BYTES, MAX_PAGE_DUMP_BYTES) ?? PAGE_DUMP_BYTES
    const at = {in: pageParam(url, 'in'), out: pageParam(url, 'out'), kids: pageParam(url, 'kids')}
    const view: ObjectView = {bytes: bytes === PAGE_DUMP_BYTES ? undefined : bytes, in: urlPage(at.in), out: urlPage(at.out), kids: urlPage(at.kids)}
    const index = ctx.core.index
    const program = ctx.core.program()
    const info = objectInfo(program, index, address, false, MIN_DUMP_BYTES)
    if (!info.heap) return {kind: 'missing', message: `${info.address} is not in the TCMalloc heap: ${info.label}${info.root ? `; scanned as a ${info.root.kind} root: ${info.root.label}` : ''}`}
    const obj = index.objectAt(address)!
    const slot = obj.index
    const o = info.object
    const link = (change: ObjectView) => objectHref(address, {...view, ...change})
    const dump = objectDump(program, index, obj, bytes, address - obj.start)
    const moreBytes = dump.from + dump.length < obj.size && dump.length < MAX_PAGE_DUMP_BYTES ? Math.min(obj.size - dump.from, MAX_PAGE_DUMP_BYTES, dump.length * 4) : 0
    const parts: Html[] = [
      objectHeaderHtml(index, slot, address, o),
      section('bytes', `Bytes ${offset(dump.from)} to ${offset(dump.from + dump.length)} of ${byteSize(obj.size)}`, html`${hexDumpHtml(index, dump, address - obj.start)}${moreBytes ? html`<p><a href="${link({bytes: moreBytes})}" id="more-bytes">show ${num(moreBytes)} bytes from ${offset(dump.from)}</a></p>` : dump.from + dump.length < obj.size ? html`<p class="dim">(a page shows ${num(MAX_PAGE_DUMP_BYTES)} bytes at most: an address further inside the object shows the bytes around it)</p>` : ''}`),
    ]
    if (o.state === 'live' && o.graph) {
      const retention = retentionOf(index)
      const into = referrersPage(index, slot, at.in)
      const out = referentsPage(index, slot, at.out)
      parts.push(
        section('referrers', `Referrers (${num(into.count)})`, html`${edgeTableHtml(index, slot, into, 'in', link)}${rootsHtml(program, index, slot)}`),
        section('referents', `Points to (${num(out.count)})`, edgeTableHtml(index, slot, out, 'out', link)),
        section('path', 'Path from a root', pathHtml(pathsTo(program, index, retention, address, {paths: 1, visit: LEAK_SEARCH_VISITS})!)),
      )
      const kids = dominatedPage(index, retention, slot, at.kids)
      parts.push(section('dominated', `Dominator subtree: ${num(kids.count)} children`, kids.count ? html`<p><a href="${dominatorsHref(slot)}">the subtree on a page of its own</a></p>${dominatedListHtml(kids)}` : html`<p class="dim">it dominates no other object</p>`))
    } else parts.push(html`<p class="dim">${o.state === 'live' ? 'the index holds the heap model only: who points to it is not known yet' : 'not live: not in the object graph (no referrers, referents or dominators)'}</p>`)
    parts.push(section('allocation', 'Allocation stack', allocationHtml(o.allocation)))
    return {kind: 'page', title: `${hex(obj.start)} ${objectName(index, slot)}`, body: html`${parts}`}
  },
}

/**
 * Objects a leaked object's page visits back through referrers looking for where its leak starts:
 * each is a ranged read of the index, and 10,000 of them, at random slots of the 30 M-object
 * bench index, took 121 and 408 ms (load 11); `toma path` searches a hundred times as far.
 */
const LEAK_SEARCH_VISITS = 2_000

function section(id: string, title: string, body: Html): Html {
  return html`<section id="object-${id}"><h2>${title}</h2>
${body}</section>
`
}

/** What TCMalloc recorded when it sampled the object: the size asked for and the stack, innermost first. */
function allocationHtml(a: Allocation | null): Html {
  if (!a) return html`<p class="dim">not sampled: TCMalloc records the stack of sampled allocations only</p>`
  return html`<p>sampled by TCMalloc: ${num(a.requestedSize)} B requested, allocated at:</p>
<ol class="stack" start="0">${a.stack.map(f => html`<li><code>${f.address}</code> ${f.symbol ?? html`<span class="dim">(no symbol)</span>`}</li>`)}</ol>`
}
