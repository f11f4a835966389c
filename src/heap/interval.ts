/** A half-open address range. */
export interface Interval {
  start: number
  end: number
}

/** The intervals' union as sorted, disjoint intervals (empty ones dropped). */
export function mergeIntervals(list: Interval[]): Interval[] {
  const sorted = list.filter(i => i.end > i.start).sort((a, b) => a.start - b.start)
  const out: Interval[] = []
  for (const i of sorted) {
    const last = out[out.length - 1]
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end)
    else out.push({...i})
  }
  return out
}
