import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {SampledAllocations} from '../heap/heap-model.js'
import {spanIndexAt} from '../heap/slot-table.js'
import {LIVE} from '../heap/states.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'
import type {GoogleLayout} from './layout.js'
import type {GoogleSpanTable} from './spans.js'

/** The sampled allocations, and the slot of each one's proxy (-1: none). */
export interface GoogleSamples {
  sampled: SampledAllocations
  /**
   * Per sample, the slot of its proxy: the object of the request's class that tcmalloc allocated
   * for the request and keeps, allocated, while the sampled object it moved to a span of its own
   * lives (allocation_sampling.cc; families before 2026-07). tcmalloc's own, not the program's: no
   * pointer of the program's reaches it. -1 where the sample has none.
   */
  proxySlot: Float64Array
}

/**
 * The sampled allocations: a sampled span points to its SampledAllocation, whose StackTrace holds
 * the requested size, up to 64 return addresses (innermost first, depth of them) and, before
 * 2026-07, the proxy. Read once the free lists and caches have their slots marked: a proxy must
 * be a live object of a span of a class, at an object's start, else it is warned of and not taken.
 */
export function readSampledAllocations(memory: AddressSpace, spans: GoogleSpanTable, state: Uint8Array, pageSize: number, layout: GoogleLayout, warnings: Warnings): GoogleSamples {
  const L = layout.sampledAllocation
  const span: number[] = []
  const requestedSize: number[] = []
  const stackStart = [0]
  const pc: number[] = []
  const proxySlot: number[] = []
  if (L) {
    for (let s = 0; s < spans.count; s++) {
      const record = spans.sampledRecord[s]!
      if (record === 0) continue
      const bytes = memory.readBytes(record, L.size)
      const depth = bytes ? u64le(bytes, L.depth) : 0
      if (!bytes || depth > L.maxDepth) {
        warnings.add('sampled', `sampled span at ${hex(spans.start[s]!)}: its SampledAllocation ${hex(record)} is ${bytes ? `damaged (depth ${depth})` : 'not in the core'}: left out of the samples`, record)
        continue
      }
      span.push(s)
      requestedSize.push(u64le(bytes, L.requestedSize))
      for (let i = 0; i < depth; i++) pc.push(u64le(bytes, L.stack + i * 8))
      stackStart.push(pc.length)
      proxySlot.push(L.proxy === undefined ? -1 : proxySlotOf(u64le(bytes, L.proxy), s, record + L.proxy))
    }
  }
  return {
    sampled: {
      span: Uint32Array.from(span),
      requestedSize: Float64Array.from(requestedSize),
      stackStart: Uint32Array.from(stackStart),
      pc: Float64Array.from(pc),
      order: Uint32Array.from(span.keys()),
      period: null,
    },
    proxySlot: Float64Array.from(proxySlot),
  }

  /** The live slot the proxy pointer names (0: none, -1), else -1 with a warning. */
  function proxySlotOf(proxy: number, sampledSpan: number, at: number): number {
    if (proxy === 0) return -1
    const s = proxy < 2 ** 48 ? spanIndexAt(spans, pageSize, proxy) : -1
    const k = s < 0 ? NaN : (proxy - spans.start[s]!) / spans.objectSize[s]!
    const slot = spans.firstObject[s]! + k
    const why =
      s < 0 ? 'in no span in use'
      : spans.tcmallocClass[s] === 0 || spans.location[s] !== 0 ? 'not in a span of a class in use'
      : !Number.isInteger(k) || k >= spans.objectCount[s]! ? 'not the start of an object'
      : state[slot] !== LIVE ? 'free (in a cache or on a list)'
      : null
    if (why === null) return slot
    warnings.add('sampled', `sampled span at ${hex(spans.start[sampledSpan]!)}: the proxy its SampledAllocation names, ${hex(proxy)} (read at ${hex(at)}), is ${why}: not taken for tcmalloc's own`, at)
    return -1
  }
}
