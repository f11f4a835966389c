import type {HeapIndex} from '../index/heap-index.js'
import {VIA_LABELS} from '../naming/via.js'
import {TIERS} from './name-counts.js'

/**
 * Per name id, the tiers that named its live objects, most objects first ("vtable",
 * "layout, debug-info"; '' for id 0): how each name in a table was known. From the counts
 * analyze kept (name-counts.ts).
 */
export function nameVias(index: HeapIndex): string[] {
  return viaLabels(index.nameCounts()['type.viaObjects'], index.meta.typeNames.length)
}

/** viaObjects (TIERS counts a name id) as each name id's tiers, most objects first. */
export function viaLabels(viaObjects: Float64Array, typeNames: number): string[] {
  const out = ['']
  for (let t = 1; t <= typeNames; t++) {
    const mine = viaObjects.subarray(t * TIERS, (t + 1) * TIERS)
    out.push([...mine.keys()].filter(v => v > 0 && mine[v]! > 0).sort((a, b) => mine[b]! - mine[a]!).map(v => VIA_LABELS[v]).join(', '))
  }
  return out
}
