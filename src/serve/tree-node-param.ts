import type {HeapIndex} from '../index/heap-index.js'
import type {RetentionIndex} from '../index/retention-index.js'
import {BadParameter, intParam} from './params.js'

/** The dominator-tree node a page is about: `id`, an object slot in the tree; absent, the tree's top (null). */
export function treeNodeParam(index: HeapIndex, retention: RetentionIndex, url: URL): number | null {
  if (!index.holds('graph')) throw new BadParameter('the index holds the heap model only: no dominator tree yet')
  if (!url.searchParams.has('id')) return null
  const id = intParam(url, 'id', 0, index.objectCount - 1)!
  if (retention.idom(id) === null) throw new BadParameter(`id=${id}: object slot ${id} is not live, so not in the dominator tree`)
  return id
}
