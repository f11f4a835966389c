import {html, num} from '../../report/html/html.js'
import {count} from '../../report/wording.js'
import {dominatedListHtml, dominatedPage} from '../dominated-rows.js'
import {dominatorsHref} from '../links.js'
import {objectLink} from '../object-link.js'
import {pageParam} from '../params.js'
import {retentionOf} from '../served-retention.js'
import type {ServePage} from '../serve-page.js'
import {treeNodeParam} from '../tree-node-param.js'

/**
 * `/dominators`: the dominator tree from its top, largest retained first, each node expanded in
 * place by the served script; `/dominators?id=SLOT`: the subtree under one object, with the way
 * up (its immediate dominator's subtree).
 */
export const dominatorsPage: ServePage = {
  path: '/dominators',
  nav: 'Dominators',
  answer(ctx, url) {
    const index = ctx.core.index
    const retention = retentionOf(index)
    const node = treeNodeParam(index, retention, url)
    const list = dominatedListHtml(dominatedPage(index, retention, node, pageParam(url, 'page')))
    if (node === null) {
      const body = html`<p>Every live object under the one that dominates it: whoever holds an object's dominator holds the object. At the top, the objects no single object dominates (the roots hold them, or one thread's stack and registers, or nothing: leaked). Largest retained first; <b>+</b> opens a node's children.</p>
<p class="dim">${num(retention.childCount(null))} objects at the top.</p>
${list}`
      return {kind: 'page', title: 'Dominator tree', body}
    }
    const r = retention.retained(node)
    const idom = retention.idom(node)
    const up = typeof idom === 'number' ? html`<p>up: ${objectLink(index, idom)} (<a href="${dominatorsHref(idom)}">its subtree</a>)</p>` : html`<p>up: <a href="${dominatorsHref()}">the tree's top</a>${typeof idom === 'object' && idom !== null ? html` <span class="dim">(only thread ${idom.thread}'s registers, stack and TLS reach it)</span>` : ''}</p>`
    const body = html`${up}
<p>${objectLink(index, node)} retains <b>${num(r.bytes)} B</b> in ${count(r.objects, 'object')}; ${count(retention.childCount(node), 'child', 'children')} in the dominator tree.</p>
${list}`
    return {kind: 'page', title: `Dominator subtree of 0x${index.object(node).start.toString(16)}`, body}
  },
}
