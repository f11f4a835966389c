import {expect} from 'vitest'
import type {SampledAllocations} from '../../src/heap/heap-model.js'

/**
 * The model's sampled allocations against the process's own MallocExtension::GetHeapSample text
 * (truth.heapSample): one sample per line, in its order (oldest first), each with its requested
 * size and its stack as StackTrace stored it, and the period of its header. A frame GetStackTrace
 * left empty prints "(nil)" (%p of a null pointer: the aarch64 fixture's unwinder leaves some).
 */
export function checkAgainstHeapSample(sampled: SampledAllocations, heapSample: string) {
  const text = heapSample.split('\n')
  const lines = text.slice(1, text.indexOf('MAPPED_LIBRARIES:') - 1)
  expect(lines.length).toBeGreaterThanOrEqual(100)
  expect(sampled.span.length).toBe(lines.length)
  expect(`heap_v2/${sampled.period}`).toBe(/heap_v2\/\d+$/.exec(text[0]!)![0])
  const fromModel = Array.from(sampled.order, i => {
    const stack = Array.from(sampled.pc.subarray(sampled.stackStart[i], sampled.stackStart[i + 1]), pc => (pc === 0 ? '(nil)' : `0x${pc.toString(16)}`))
    return `${sampled.requestedSize[i]} @ ${stack.join(' ')}`
  })
  expect(fromModel).toEqual(
    lines.map(l => {
      const m = /^ *1: *(\d+) \[ *1: *\1\] @ (.*)$/.exec(l)
      if (!m) throw new Error(`not a one-object heap sample line: ${l}`)
      return `${m[1]} @ ${m[2]}`
    }),
  )
}
