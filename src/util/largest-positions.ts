// Apart from the retention analysis (dominators/retention.ts) so that a query ranking a few objects
// (analysis/dominated.ts) does not load the analysis's worker-thread code.

/**
 * Positions of the k largest values, largest first (ties by position), in one pass: a min-heap of
 * the k best so far, which most values (smaller than its least) pass with one comparison.
 */
export function largestPositions(values: ArrayLike<number>, k: number, at: (i: number) => number = i => values[i]!): number[] {
  const n = values.length
  if (k <= 0) return []
  const heap = new Uint32Array(Math.min(k, n))
  let size = 0
  // a is "smaller" than b: smaller value, or the same value at a later position.
  const less = (a: number, b: number) => at(a) < at(b) || (at(a) === at(b) && a > b)
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      if (l >= size) return
      const c = l + 1 < size && less(heap[l + 1]!, heap[l]!) ? l + 1 : l
      if (!less(heap[c]!, heap[i]!)) return
      const t = heap[c]!
      heap[c] = heap[i]!
      heap[i] = t
      i = c
    }
  }
  for (let i = 0; i < n; i++) {
    if (size < heap.length) {
      let j = size++
      heap[j] = i
      while (j > 0 && less(heap[j]!, heap[(j - 1) >> 1]!)) {
        const p = (j - 1) >> 1
        const t = heap[p]!
        heap[p] = heap[j]!
        heap[j] = t
        j = p
      }
    } else if (less(heap[0]!, i)) {
      heap[0] = i
      siftDown(0)
    }
  }
  return Array.from(heap.subarray(0, size)).sort((a, b) => at(b) - at(a) || a - b)
}
