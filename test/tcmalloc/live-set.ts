import {expect} from 'vitest'
import {LIVE} from '../../src/heap/states.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import type {TcmallocHeap} from '../../src/tcmalloc/heap.js'
import {addr, type Truth} from '../helpers/fixture-core.js'

/** Every live object of the model: start address → size. */
export function liveObjects(heap: TcmallocHeap): Map<number, number> {
  const live = new Map<number, number>()
  const s = heap.spans
  for (let i = 0; i < s.count; i++) {
    if (s.location[i] !== IN_USE) continue
    for (let k = 0; k < s.objectCount[i]!; k++) {
      if (heap.state[s.firstObject[i]! + k] === LIVE) live.set(s.start[i]! + k * s.objectSize[i]!, s.objectSize[i]!)
    }
  }
  return live
}

/** The process's own counters, as MallocExtension reported them just before the core was taken. */
export const COUNTERS = [
  'generic.current_allocated_bytes',
  'generic.heap_size',
  'tcmalloc.pageheap_free_bytes',
  'tcmalloc.pageheap_unmapped_bytes',
  'tcmalloc.central_cache_free_bytes',
  'tcmalloc.transfer_cache_free_bytes',
  'tcmalloc.thread_cache_free_bytes',
]

/** The model equals the process's own record: bytes per state = its counters, live set = its hooks' record. */
export function checkAgainstTruth(heap: TcmallocHeap, truth: Truth) {
  // Bytes per state equal TCMalloc's own counters recorded by the process.
  for (const property of COUNTERS) {
    const row = heap.crossCheck.find(c => c.property === property)!
    expect({property, toma: row.toma}).toEqual({property, toma: truth.counters[property]})
    expect({property, tcmallocInCore: row.allocator}).toEqual({property, tcmallocInCore: truth.counters[property]})
    expect({property, independent: row.notIndependent}).toEqual({property, independent: undefined})
  }
  expect(heap.warnings.list).toEqual([])

  // The live set equals the hooks' record, address by address.
  const live = liveObjects(heap)
  const truthLive = new Set(truth.live.map(([a]) => addr(a)))
  const missing = [...truthLive].filter(a => !live.has(a))
  expect(missing).toEqual([])
  // Allocations the hooks could not see: made before the hooks were installed (libstdc++'s
  // emergency exception pool, iostream/locale setup). The process recorded their total as
  // current_allocated_bytes at hook installation; none of them was freed afterwards through a
  // hook (unknownFrees), so what toma sees beyond the hooks' record must add up to exactly that.
  const extras = [...live].filter(([a]) => !truthLive.has(a))
  const extraBytes = extras.reduce((n, [, size]) => n + size, 0)
  expect(truth.unknownFrees.count).toBe(0)
  expect(extraBytes).toBe(truth.preHookAllocatedBytes)
}
