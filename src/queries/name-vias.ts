import type {HeapIndex} from '../index/heap-index.js'
import {LIVE} from '../heap/states.js'
import {VIA_LABELS} from '../naming/via.js'

/**
 * Per name id, the tiers that named its live objects, most objects first ("vtable",
 * "layout, debug-info"; '' for id 0): how each name in a table was known.
 */
export function nameVias(index: HeapIndex): string[] {
  const types = index.columns.type()
  const vias = index.columns.via()
  const counts = new ViaCounts(index.meta.typeNames.length)
  index.objects.forEachObject(id => counts.add(types[id]!, vias[id]!), LIVE)
  return counts.labels()
}

/** Live objects per name id and tier, for nameVias (a caller that walks the objects anyway counts here in its own walk). */
export class ViaCounts {
  private readonly counts: Float64Array
  private readonly tiers = VIA_LABELS.length

  constructor(private readonly typeNames: number) {
    this.counts = new Float64Array((typeNames + 1) * this.tiers)
  }

  /** One live object of name id t (in range: the caller checked it), named by tier `via`. */
  add(t: number, via: number): void {
    if (t !== 0) this.counts[t * this.tiers + Math.min(via, this.tiers - 1)]!++
  }

  /** Per name id, its tiers, most objects first ('' for id 0). */
  labels(): string[] {
    return viaLabels(this.counts, this.typeNames, this.tiers)
  }
}

function viaLabels(counts: Float64Array, typeNames: number, tiers: number): string[] {
  const out = ['']
  for (let t = 1; t <= typeNames; t++) {
    const mine = counts.subarray(t * tiers, (t + 1) * tiers)
    out.push([...mine.keys()].filter(v => v > 0 && mine[v]! > 0).sort((a, b) => mine[b]! - mine[a]!).map(v => VIA_LABELS[v]).join(', '))
  }
  return out
}
