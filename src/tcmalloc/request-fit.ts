import type {SizeClasses} from './size-map.js'
import {lastAtOrBelow} from '../util/search.js'

/**
 * Whether TCMalloc would have given a block of `blockSize` bytes for a request of `request` bytes:
 * the naming tiers' test that a length or capacity read from an owner is the one the block was
 * allocated for. A small request takes the smallest class that holds it, so a block of class size
 * S holds the requests in (previous class size, S]. A request past the largest class takes whole
 * pages (gperftools' `pages(size)`), so a large block of S bytes holds (S − page size, S]. Exact for
 * every block but a sampled small one (TCMalloc gives it a span of its own, rounded to pages): such
 * a block is refused, never misnamed.
 */
export function requestFit(sizes: SizeClasses, pageSize: number): (request: number, blockSize: number) => boolean {
  // Ascending class sizes, class 0 (size 0) first: the sentinel below the smallest class.
  const classSizes = sizes.size.slice(0, sizes.count)
  const largest = classSizes[classSizes.length - 1]!
  return (request, blockSize) => {
    if (!(request > 0 && request <= blockSize)) return false
    if (request > largest) return request > blockSize - pageSize && blockSize % pageSize === 0
    const at = lastAtOrBelow(classSizes, blockSize)
    if (at < 1 || classSizes[at] !== blockSize) return false
    return request > classSizes[at - 1]!
  }
}
