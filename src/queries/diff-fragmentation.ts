import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {memoryAccounting} from './memory-accounting.js'
import {pageHeapShape} from './page-heap-shape.js'
import {spanOccupancy, type ClassFragmentation} from './span-occupancy.js'

/** One figure in each core and its change (after − before). */
export interface Change {
  before: number
  after: number
  change: number
}

/** A size class in both cores: the per-class figures of `toma memory` (spanOccupancy), each with its change. */
export interface ClassChange {
  sizeClass: number
  size: number
  spans: Change
  spanBytes: Change
  liveObjects: Change
  liveBytes: Change
  /** Free slots' bytes in partly used spans (central, transfer and thread caches together). */
  partialFreeBytes: Change
}

const change = (before: number, after: number): Change => ({before, after, change: after - before})

/** A class's figures in one core, as `toma memory` has them; zeros where the core has no span of the class. */
function classFigures(c: ClassFragmentation | undefined) {
  if (!c) return {spans: 0, spanBytes: 0, liveObjects: 0, liveBytes: 0, partialFreeBytes: 0}
  const free = c.partial.freeBytes
  return {spans: c.spans, spanBytes: c.spanBytes, liveObjects: c.liveObjects, liveBytes: c.liveObjects * c.size, partialFreeBytes: free.central + free.transfer + free.threadCaches}
}

/**
 * How fragmentation changed between two cores of one process (issue 53): per size class, spans,
 * live objects and bytes, and free bytes in partly used spans in each core; the page heap's free
 * bytes; the heap's accounting lines (live, free by tier). The per-class figures are
 * spanOccupancy's, the lines memoryAccounting's: `toma memory`'s own, for each core.
 *
 * Classes are ordered by span bytes grown beyond live bytes grown (spanBytes.change −
 * liveBytes.change, largest first; ties by class number): first the classes whose spans grew
 * while what they hold did not. A class is one size class number of one object size (a core read
 * with other size classes has its classes apart, and the diff warns of it).
 */
export function fragmentationChange(before: {index: HeapIndex; program: Program}, after: {index: HeapIndex; program: Program}) {
  const classesOf = (i: HeapIndex) => new Map(spanOccupancy(i, 0).classes.map(c => [`${c.sizeClass}:${c.size}`, c]))
  const a = classesOf(before.index)
  const b = classesOf(after.index)
  const classes: ClassChange[] = []
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const x = classFigures(a.get(key))
    const y = classFigures(b.get(key))
    const c = (a.get(key) ?? b.get(key))!
    classes.push({
      sizeClass: c.sizeClass,
      size: c.size,
      spans: change(x.spans, y.spans),
      spanBytes: change(x.spanBytes, y.spanBytes),
      liveObjects: change(x.liveObjects, y.liveObjects),
      liveBytes: change(x.liveBytes, y.liveBytes),
      partialFreeBytes: change(x.partialFreeBytes, y.partialFreeBytes),
    })
  }
  const beyondLive = (c: ClassChange) => c.spanBytes.change - c.liveBytes.change
  classes.sort((p, q) => beyondLive(q) - beyondLive(p) || p.sizeClass - q.sizeClass || p.size - q.size)
  const pa = pageHeapShape(before.index)
  const pb = pageHeapShape(after.index)
  const ma = memoryAccounting(before.program, before.index)
  const mb = memoryAccounting(after.program, after.index)
  // Lines by their name: one program has one allocator, so both cores have the same lines (a place
  // only one core has is 0 in the other).
  const partsA = new Map(ma.heap.parts.map(l => [l.part, l.bytes]))
  const partsB = new Map(mb.heap.parts.map(l => [l.part, l.bytes]))
  const names = [...new Set([...partsA.keys(), ...partsB.keys()])]
  return {
    order: 'span bytes grown minus live bytes grown, largest first',
    classes,
    pageHeapFree: {normal: change(pa.normalBytes, pb.normalBytes), returned: change(pa.returnedBytes, pb.returnedBytes)},
    accounting: {
      heap: change(ma.heap.bytes, mb.heap.bytes),
      parts: names.map(part => ({part, ...change(partsA.get(part) ?? 0, partsB.get(part) ?? 0)})),
    },
  }
}

export type FragmentationChange = ReturnType<typeof fragmentationChange>
