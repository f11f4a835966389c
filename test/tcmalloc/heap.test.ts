import {afterAll, describe, expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {objectAt} from '../../src/heap/objects.js'
import {STATE_NAMES} from '../../src/heap/states.js'
import {threadCachesByTls} from '../../src/tcmalloc/thread-tls.js'
import {addr, fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {checkAgainstTruth} from './live-set.js'

const fixtures = fixtureIndex()

describe.each(fixtures.map(f => [f.id, f] as const))('heap model on %s', (id, entry) => {
  // One core and one analysis with symbols for the tests below that read it (the signature test makes its own).
  let opened: ReturnType<typeof open> | undefined
  const open = async () => {
    const fixture = await openFixture(id)
    return {...fixture, heap: analyzeHeap(fixture.program)}
  }
  const shared = () => (opened ??= open())
  afterAll(async () => (await opened)?.program.core.close())

  it('finds every live object and agrees with TCMalloc\'s counters (globals from symbols or known positions)', async () => {
    const {program, truth, heap} = await shared()
    expect(heap.globals.version).toBe(truth.gperftools)
    // The page size the library was configured with (source builds with --with-tcmalloc-pagesize).
    expect(heap.pageSize).toBe((entry.pageKiB ?? 8) * 1024)
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
    const {truth, heap} = await shared()
    for (const o of truth.objects) {
      const start = addr(o.address)
      for (const off of [0, Math.max(0, o.size - 1), o.size >> 1]) {
        const hit = objectAt(heap, start + off)
        expect(hit?.start, `${o.name}+${off}`).toBe(start)
        expect(STATE_NAMES[heap.state[hit!.index]!]).toBe('live')
      }
    }
  })
})

it('has fixtures of at least four gperftools versions', () => {
  expect(new Set(fixtures.map(f => f.gperftools)).size).toBeGreaterThanOrEqual(4)
})
