import type {HeapIndex} from '../index/heap-index.js'
import {RetentionIndex} from '../index/retention-index.js'

const kept = new WeakMap<HeapIndex, RetentionIndex>()

/**
 * One RetentionIndex per served index, kept between requests, that reads word by word and never
 * an array whole: on a 30 M-object core one array read whole is a second of some page's answer
 * (whichever passes the query's count of reads) and hundreds of MB kept while the server runs.
 */
export function retentionOf(index: HeapIndex): RetentionIndex {
  let r = kept.get(index)
  if (!r) kept.set(index, (r = new RetentionIndex(index, Number.POSITIVE_INFINITY)))
  return r
}
