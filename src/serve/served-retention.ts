import type {HeapIndex} from '../index/heap-index.js'
import {RetentionIndex} from '../index/retention-index.js'

const kept = new WeakMap<HeapIndex, RetentionIndex>()

/**
 * One RetentionIndex per served index, kept between requests: it reads an array whole once a
 * query has asked it for many words (a long path, a deep subtree), and a server asks again and
 * again, so the whole array is read once, not once a page.
 */
export function retentionOf(index: HeapIndex): RetentionIndex {
  let r = kept.get(index)
  if (!r) kept.set(index, (r = new RetentionIndex(index)))
  return r
}
