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
  const tiers = VIA_LABELS.length
  const counts = new Float64Array((index.meta.typeNames.length + 1) * tiers)
  index.objects.forEachObject(id => {
    const t = types[id]!
    if (t !== 0) counts[t * tiers + Math.min(vias[id]!, tiers - 1)]!++
  }, LIVE)
  const out = ['']
  for (let t = 1; t <= index.meta.typeNames.length; t++) {
    const mine = counts.subarray(t * tiers, (t + 1) * tiers)
    out.push([...mine.keys()].filter(v => v > 0 && mine[v]! > 0).sort((a, b) => mine[b]! - mine[a]!).map(v => VIA_LABELS[v]).join(', '))
  }
  return out
}
