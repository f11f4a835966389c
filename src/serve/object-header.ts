import type {HeapIndex} from '../index/heap-index.js'
import type {ObjectInfo} from '../queries/object-info.js'
import {html, num, type Html} from '../report/html/html.js'
import {facts} from '../report/html/section.js'
import {ALLOCATOR_OWN, byteSize, count, namingWords, objectKind, offset, sightingText} from '../report/wording.js'
import {classHref, dominatorsHref, objectHref, untypedClassHref} from './links.js'

type HeapObjectInfo = Extract<ObjectInfo, {heap: true}>['object']

/**
 * What an object is and why it is held: its address, size, state, name with the tier that gave
 * it (find-object's words) and its class, its holder when only a holder names it, whether a root
 * reaches it, what it retains and its immediate dominator.
 */
export function objectHeaderHtml(index: HeapIndex, slot: number, address: number, o: HeapObjectInfo): Html {
  const w = namingWords(o)
  const typeId = o.state === 'live' ? index.typeId(slot) : 0
  const name = w.name === null ? '' : typeId !== 0 ? html`<a href="${classHref(typeId)}" class="class-link">${w.name}</a> ` : html`${w.name} `
  const unnamed = o.state === 'live' && typeId === 0 ? html` <a href="${untypedClassHref(o.sizeClass)}">(the unnamed objects of its size class)</a>` : ''
  const holder = o.via === 'holder' ? index.holderOf(slot) : null
  const rows: Array<[string, string | Html]> = [
    ['address', html`<code>${o.address}</code>${o.offset ? html` <span class="dim">(0x${address.toString(16)} is ${offset(o.offset)} inside it)</span>` : ''}`],
    ['id', `#${o.id}`],
    ['size', html`${byteSize(o.size)} <span class="dim">size class ${o.sizeClass || 'none (large span)'}</span>`],
    ['state', html`${o.state === 'live' ? o.state : html`<span class="warn">${o.state}</span>`}${o.thread ? (o.thread.cpu !== null ? ` (CPU ${o.thread.cpu}'s cache ${o.thread.threadCache})` : ` (thread ${o.thread.tid ?? '?'}, cache ${o.thread.threadCache})`) : ''}`],
    [w.lead || 'holder', html`${name}${holder ? html`<span class="dim">(${holder.holder.kind})</span> ` : ''}<span class="dim">${w.note}</span>${unnamed}`],
  ]
  if (o.held) {
    const h = o.held
    const reach = index.reachability(slot)
    rows.push(['reachability', reach === 'reached' ? 'reached from a root' : reach === 'allocator' ? ALLOCATOR_OWN : html`<span class="bad">leaked: no root reaches it</span>`])
    rows.push(['retains', html`${num(h.retained.bytes)} B in ${count(h.retained.objects, 'object')} (<a href="${dominatorsHref(slot)}">its dominator subtree</a>)`])
    rows.push(['dominator', h.immediateDominator ? html`<a href="${objectHref(Number(h.immediateDominator.address))}" id="dominator-link"><code>${h.immediateDominator.address}</code></a> ${objectKind(h.immediateDominator)}` : h.onlyThread !== null ? `none: only thread ${h.onlyThread}'s registers, stack and TLS reach it` : h.reachable ? 'none (held directly by roots)' : h.allocatorOwn ? 'none' : 'none (it starts a leaked structure)'])
  } else if (o.state === 'live' && !o.graph) rows.push(['held', html`<span class="dim">not known yet: the index holds the heap model only</span>`])
  rows.push(['span', `${o.span.record}: ${num(o.span.pages)} page(s) from ${o.span.start}`])
  for (const s of o.lastSeen) rows.push(['last seen', sightingText(s)])
  return facts(rows)
}
