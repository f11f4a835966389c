import {describe, expect, it} from 'vitest'
import {analyzeHeap, objectAt, type TcmallocHeap} from '../../src/tcmalloc/heap.js'
import {STATE_NAMES} from '../../src/tcmalloc/object-states.js'
import {threadCachesByTls} from '../../src/tcmalloc/thread-tls.js'
import {addr, fixtureIndex, openFixture, type Truth} from '../helpers/fixture-core.js'
import {liveObjects} from './live-set.js'

const fixtures = fixtureIndex()

/** The process's own counters, as MallocExtension reported them just before the core was taken. */
const COUNTERS = [
  'generic.current_allocated_bytes',
  'generic.heap_size',
  'tcmalloc.pageheap_free_bytes',
  'tcmalloc.pageheap_unmapped_bytes',
  'tcmalloc.central_cache_free_bytes',
  'tcmalloc.transfer_cache_free_bytes',
  'tcmalloc.thread_cache_free_bytes',
]

function checkAgainstTruth(heap: TcmallocHeap, truth: Truth) {
  // Bytes per state equal TCMalloc's own counters recorded by the process.
  for (const property of COUNTERS) {
    const row = heap.crossCheck.find(c => c.property === property)!
    expect({property, toma: row.toma}).toEqual({property, toma: truth.counters[property]})
    expect({property, tcmallocInCore: row.tcmalloc}).toEqual({property, tcmallocInCore: truth.counters[property]})
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

describe.each(fixtures.map(f => [f.id, f] as const))('heap model on %s', (id, entry) => {
  it('finds every live object and agrees with TCMalloc\'s counters (globals from symbols or known positions)', async () => {
    const {program, truth} = await openFixture(id)
    const heap = analyzeHeap(program)
    expect(heap.globals.version).toBe(truth.gperftools)
    checkAgainstTruth(heap, truth)
    // Every thread cache is attributed to a live thread of the process: through ThreadCache::tid_
    // (≤ 2.15) or, where the cache records none (2.15.90+), through each thread's TLS pointer.
    const tids = new Set(truth.threads.map(t => t.tid))
    expect(heap.threadCaches.length).toBeGreaterThan(0)
    for (const c of heap.threadCaches) expect(tids.has(c.tid!), `cache ${c.address.toString(16)} tid ${c.tid}`).toBe(true)
    // Where both exist, the TLS pointers agree with tid_ (each thread's current cache).
    const tls = threadCachesByTls(program, heap.module, heap.globals.layout.group, program.core.threads)
    if (program.modules.find(m => m === heap.module.loaded)?.file && entry.config !== 'static') expect(tls.size).toBeGreaterThan(0)
    for (const [cache, tid] of tls) expect(heap.threadCaches.find(c => c.address === cache)?.tid).toBe(tid)
    program.core.close()
  })

  it('gives the same answer with every global found by structural signatures alone', async () => {
    const {program, truth} = await openFixture(id)
    const heap = analyzeHeap(program, {signaturesOnly: true})
    expect(heap.globals.how.pageHeap).toMatch(/^signature/)
    expect(heap.globals.how.centralCache).toMatch(/^signature/)
    expect(heap.globals.how.sizeMap).toMatch(/^signature/)
    expect(heap.globals.how.threadHeaps).toMatch(/^signature/)
    checkAgainstTruth(heap, truth)
    program.core.close()
  })

  it('resolves interior addresses of manifest objects to their object', async () => {
    const {program, truth} = await openFixture(id)
    const heap = analyzeHeap(program)
    for (const o of truth.objects) {
      const start = addr(o.address)
      for (const off of [0, Math.max(0, o.size - 1), o.size >> 1]) {
        const hit = objectAt(heap, start + off)
        expect(hit?.start, `${o.name}+${off}`).toBe(start)
        expect(STATE_NAMES[heap.state[hit!.index]!]).toBe('live')
      }
    }
    program.core.close()
  })
})

it('has fixtures of at least four gperftools versions', () => {
  expect(new Set(fixtures.map(f => f.gperftools)).size).toBeGreaterThanOrEqual(4)
})
