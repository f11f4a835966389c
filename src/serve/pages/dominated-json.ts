import {dominatedPage} from '../dominated-rows.js'
import {pageParam} from '../params.js'
import {retentionOf} from '../served-retention.js'
import type {ServePage} from '../serve-page.js'
import {treeNodeParam} from '../tree-node-param.js'

/** `/api/dominated?id=SLOT&page=N`: a page of a dominator-tree node's children as JSON (the tree's lazy expansion). */
export const dominatedJsonPage: ServePage = {
  path: '/api/dominated',
  answer(ctx, url) {
    const index = ctx.core.index
    const retention = retentionOf(index)
    const parent = treeNodeParam(index, retention, url)
    return {kind: 'json', value: dominatedPage(index, retention, parent, pageParam(url, 'page'))}
  },
}
