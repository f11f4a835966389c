import {lastAtOrBelow} from '../util/search.js'

/**
 * What an allocator gives for a request, as plain data (a naming worker is handed it): its class
 * sizes ascending, 0 first (the sentinel below the smallest class), and its page size.
 */
export interface RequestFit {
  classSizes: Float64Array
  pageSize: number
}

/**
 * Whether the allocator would have given a block of `blockSize` bytes for a request of `request`
 * bytes: the naming tiers' test that a length or capacity read from an owner is the one the block
 * was allocated for. A small request takes the smallest class that holds it, so a block of class
 * size S holds the requests in (previous class size, S]. A request past the largest class takes
 * whole pages, so a large block of S bytes holds (S − page size, S]. Exact for every block but a
 * sampled small one (it gets a span of its own, rounded to pages): such a block is refused, never
 * misnamed.
 */
export function fitsRequest({classSizes, pageSize}: RequestFit): (request: number, blockSize: number) => boolean {
  const largest = classSizes[classSizes.length - 1]!
  return (request, blockSize) => {
    if (!(request > 0 && request <= blockSize)) return false
    if (request > largest) return request > blockSize - pageSize && blockSize % pageSize === 0
    const at = lastAtOrBelow(classSizes, blockSize)
    return at >= 1 && classSizes[at] === blockSize && request > classSizes[at - 1]!
  }
}
