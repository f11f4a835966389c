/**
 * Binary searches over ascending numeric arrays (typed or plain): the one place the index
 * arithmetic lives, for span tables, segment tables, symbol tables and edge lists alike.
 */

/** Index of the last element ≤ value, or −1 when every element is greater. */
export function lastAtOrBelow(sorted: ArrayLike<number>, value: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! <= value) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/**
 * lastAtOrBelow over values read through `at` (an array read in blocks on demand). Apart from
 * lastAtOrBelow, whose direct element reads are what the hot paths need.
 */
export function lastAtOrBelowBy(length: number, at: (i: number) => number, value: number): number {
  let lo = 0
  let hi = length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (at(mid) <= value) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/** Index of the first element ≥ value (sorted.length when there is none). */
export function firstAtOrAbove(sorted: ArrayLike<number>, value: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}
