import {afterAll, expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {openArm64Fixture} from '../helpers/arm64-fixture.js'
import {checkAgainstTruth} from './live-set.js'

// Debian 12's arm64 gperftools 2.10 in a QEMU-user core (fixtures/arm64/README.md): the heap model
// reads it as it reads the x86-64 cores, exactly, with the library found through link_map.
let opened: ReturnType<typeof openArm64Fixture> | undefined
const fixture = () => (opened ??= openArm64Fixture())
afterAll(async () => (await opened)?.core.close())

it('aarch64 gperftools 2.10: every live object, and bytes per state equal to TCMalloc\'s counters', async () => {
  const {program, truth} = await fixture()
  const heap = analyzeHeap(program)
  expect(heap.globals.version).toBe(truth.gperftools)
  expect(heap.pageSize).toBe(8192)
  checkAgainstTruth(heap, truth)
  // Each thread's cache, its owner through ThreadCache::tid_ (pthread_t): the struct pthread glibc's
  // lists give each thread where the core records no thread pointer (program/thread-pointer.ts).
  // As on x86-64 (heap.test.ts), every cache belongs to a live thread (2.10 keeps the main thread's
  // first cache, made before its thread-specific data was set up, with its pthread_t too).
  const tids = new Set(truth.threads.map(t => t.tid))
  expect(heap.threadCaches.length).toBe(5)
  for (const c of heap.threadCaches) expect(tids.has(c.tid!), `cache ${c.address.toString(16)} tid ${c.tid}`).toBe(true)
})
