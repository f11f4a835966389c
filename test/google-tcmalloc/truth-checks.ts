import {expect} from 'vitest'
import type {GoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {objectAt} from '../../src/heap/objects.js'
import {runToma} from '../helpers/run-toma.js'
import {CENTRAL_CACHE, LIVE, PAGE_HEAP, RETURNED, THREAD_CACHE, TRANSFER_CACHE} from '../../src/heap/states.js'

/** What gtcdemo (fixtures/programs/gtcdemo.cpp) records of itself before it is dumped: truth.json. */
export interface GoogleTruth {
  pid: number
  pageShift: number
  perCpuActive: boolean
  /** Each thread and the CPU it ran on when the truth was written (workers pinned to CPUs 0 and 1 where there are two). */
  threads: Array<{tid: number; role: string; cpu: number; pinned: number}>
  properties: Record<string, number>
  /** [address, requested bytes, allocated bytes (nallocx), thread]: every object the program holds. */
  live: Array<[string, number, number, number]>
  objects: Array<{name: string; address: string; size: number; class: string | null}>
  sampledDetail: Array<{address: string; requested: number; allocated: number}>
}

/** Each state's bytes equal the process's own MallocExtension properties, with no warning. */
export function checkStateBytes(heap: GoogleHeap, truth: GoogleTruth): void {
  const p = truth.properties
  const bytes = heap.totals.bytes
  expect(heap.warnings.list.map(w => w.message)).toEqual([])
  expect(bytes[LIVE]).toBe(p['generic.current_allocated_bytes'])
  // Per-CPU slabs and per-thread caches are both the front end; a core has one of them in use.
  expect(bytes[THREAD_CACHE]).toBe(p['tcmalloc.cpu_free']! + p['tcmalloc.thread_cache_free']!)
  expect(bytes[THREAD_CACHE]).toBeGreaterThan(0)
  expect(bytes[TRANSFER_CACHE]).toBe(p['tcmalloc.transfer_cache_free']! + p['tcmalloc.sharded_transfer_cache_free']!)
  // CentralFreeList counts its spans' free objects and each span's tail that fits no object.
  expect(bytes[CENTRAL_CACHE]! + heap.totals.spanWaste).toBe(p['tcmalloc.central_cache_free'])
  // The back end: filler pages free in their trackers and cached hugepages; released pages.
  expect(bytes[PAGE_HEAP]).toBe(p['tcmalloc.page_heap_free'])
  expect(bytes[PAGE_HEAP]).toBeGreaterThan(0)
  expect(bytes[RETURNED]).toBe(p['tcmalloc.page_heap_unmapped'])
}

/** Every object the program holds is a live object of the model, at its start, at least its allocated size. */
export function checkLiveObjects(heap: GoogleHeap, truth: GoogleTruth): void {
  expect(truth.live.length).toBeGreaterThan(1000)
  const wrong: string[] = []
  for (const [address, , allocated] of truth.live) {
    const at = Number.parseInt(address, 16)
    const hit = objectAt(heap, at)
    if (!hit || hit.start !== at || heap.state[hit.index] !== LIVE || hit.size < allocated) wrong.push(address)
  }
  expect(wrong).toEqual([])
}

/** Every sampled allocation, with the size the program asked for. */
export function checkSampled(heap: GoogleHeap, truth: GoogleTruth): void {
  const requested = new Map(Array.from(heap.sampled.span, (s, i) => [heap.spans.start[s]!, heap.sampled.requestedSize[i]!]))
  expect(truth.sampledDetail.length).toBeGreaterThan(0)
  for (const d of truth.sampledDetail) expect(requested.get(Number.parseInt(d.address, 16)), d.address).toBe(d.requested)
  expect(heap.sampled.span.length).toBe(truth.sampledDetail.length)
}

/** Each cached object's holder, a CPU's slab or a thread's cache, and each cache's count. */
export function checkCacheOwners(heap: GoogleHeap): void {
  const {threadCacheObjects, threadCacheOwner, frontCaches} = heap
  const perCache = new Float64Array(frontCaches.length)
  for (let i = 0; i < threadCacheObjects.length; i++) {
    expect(heap.state[threadCacheObjects[i]!]).toBe(THREAD_CACHE)
    if (i > 0) expect(threadCacheObjects[i]!).toBeGreaterThan(threadCacheObjects[i - 1]!)
    perCache[threadCacheOwner[i]!]!++
  }
  frontCaches.forEach((c, i) => expect(perCache[i]).toBe(c.objects))
  // In per-CPU mode the CPUs hold the cached objects (a thread cache made before the slabs were set up stays empty).
  if (heap.perCpuActive) for (const c of frontCaches) if (c.objects > 0) expect(c.cpu).not.toBeNull()
}

/** tcmalloc's own counters in the core agree with what toma walked: each huge cache's size_, each thread cache's size_. */
export function checkCounters(heap: GoogleHeap, truth: GoogleTruth): void {
  const hugeCache = heap.crossCheck.find(c => c.property === 'HugeCache::size_, summed')
  expect(hugeCache).toBeDefined()
  const threads = heap.crossCheck.find(c => c.property === 'ThreadCache::size_, summed')
  if (!truth.perCpuActive) expect(threads?.toma).toBe(truth.properties['tcmalloc.thread_cache_free'])
  for (const c of heap.crossCheck) expect(c.toma, c.name).toBe(c.allocator)
}

/** `toma classes` on an analysed core names exactly as many objects of each vtable class as the program kept (its record lists every one). */
export async function checkClassCounts(core: string, index: string, truth: GoogleTruth, cwd: string): Promise<void> {
  const classes = await runToma(['classes', core, '--index', index, '--json'], {cwd})
  expect(classes.status, classes.stderr).toBe(0)
  const names = JSON.parse(classes.stdout) as {types: Array<{type: string; objects: number}>}
  const expected = new Map<string, number>()
  for (const o of truth.objects) if (o.class) expected.set(o.class, (expected.get(o.class) ?? 0) + 1)
  expect(expected.size).toBeGreaterThan(0)
  for (const [name, n] of expected) expect(names.types.find(c => c.type === name)?.objects, name).toBe(n)
}
