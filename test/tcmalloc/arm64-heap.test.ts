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
  // 2.10's caches record no owner, and a core without NT_ARM_TLS gives no thread's TLS pointer:
  // every cache is there, its thread unknown rather than guessed.
  expect(heap.threadCaches.length).toBe(truth.threads.length)
  for (const c of heap.threadCaches) expect(c.tid).toBeNull()
})
