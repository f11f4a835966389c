import {GrowableF64, GrowableU32} from '../util/growable.js'

/**
 * Words of live objects that point into slots that are not live (free on a list, or in a free
 * span): dangling pointers, or stale fields never read again. The scan meets them where it looks
 * a word up and finds no live object; it keeps the first few of each range and counts them all.
 */
export interface FreePointers {
  /** Every such word the scan met. */
  count: number
  /** The kept ones: the word's address, the value in it, the slot it points into. */
  word: Float64Array
  value: Float64Array
  target: Uint32Array
}

/** Kept at most in all. */
export const KEEP_FREE_POINTERS = 1 << 16
/**
 * Kept at most by one range of the scan, as a sample for grouping: the ranges' logs all live until
 * they are joined, at the scan's peak (4,096 a range cost 15-20 MiB there at scale 24; 512, none
 * measurable). Pointers into watched slots (damaged free objects) are kept apart, as many again.
 */
const KEEP_PER_RANGE = 1 << 9

export class FreePointerLog {
  count = 0
  private watchedKept = 0
  private readonly word = new GrowableF64(64)
  private readonly value = new GrowableF64(64)
  private readonly target = new GrowableU32(64)

  /** `watch`: slots (ascending) whose pointers are kept past the sample: who still points at a damaged free object. */
  constructor(private readonly watch: Uint32Array = new Uint32Array(0)) {}

  add(word: number, value: number, target: number): void {
    if (this.count++ >= KEEP_PER_RANGE) {
      if (this.watch.length === 0 || this.watchedKept >= KEEP_PER_RANGE || !includes(this.watch, target)) return
      this.watchedKept++
    }
    this.word.push(word)
    this.value.push(value)
    this.target.push(target)
  }

  finish(): FreePointers {
    return {count: this.count, word: this.word.toArray(), value: this.value.toArray(), target: this.target.toArray()}
  }
}

function includes(sorted: Uint32Array, v: number): boolean {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < v) lo = mid + 1
    else hi = mid
  }
  return lo < sorted.length && sorted[lo] === v
}

/** The ranges' logs joined in order, keeping the first KEEP_FREE_POINTERS. */
export function joinFreePointers(parts: FreePointers[]): FreePointers {
  const kept = Math.min(KEEP_FREE_POINTERS, parts.reduce((n, p) => n + p.word.length, 0))
  const out: FreePointers = {count: parts.reduce((n, p) => n + p.count, 0), word: new Float64Array(kept), value: new Float64Array(kept), target: new Uint32Array(kept)}
  let at = 0
  for (const p of parts) {
    const n = Math.min(p.word.length, kept - at)
    out.word.set(p.word.subarray(0, n), at)
    out.value.set(p.value.subarray(0, n), at)
    out.target.set(p.target.subarray(0, n), at)
    at += n
  }
  return out
}
