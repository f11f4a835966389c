import {describe, expect, it} from 'vitest'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {groupOfVersion, versionsOfGroup} from '../../src/tcmalloc/layout.js'
import {fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {checkAgainstTruth} from './live-set.js'

// The core alone: no executable, no library file, so no symbols and no version string; what is
// left are the core's own hints (the library's build-id note and its name in the NT_FILE list)
// and the structures themselves.
const fixtures = fixtureIndex()

async function openCoreOnly(id: string) {
  const fixture = await openFixture(id)
  for (const m of fixture.program.modules) m.file = null
  return fixture
}

describe.each(fixtures.map(f => [f.id, f] as const))('the core alone, %s', (id, entry) => {
  it('finds every global by signature and is exact, the release named by the core', async () => {
    const {program, truth} = await openCoreOnly(id)
    const heap = analyzeHeap(program)
    for (const how of Object.values(heap.globals.how)) expect(how).toMatch(/^signature/)
    checkAgainstTruth(heap, truth)
    if (entry.config === 'static') {
      // No library, so no name: the structure gives the layout group's releases.
      expect(heap.globals.versionHow).toMatch(/^structure of the core matched layout group/)
      expect(versionsOfGroup(heap.globals.layout.group)).toContain(truth.gperftools)
    } else {
      expect(heap.globals.versionHow).toMatch(/^(build-id [0-9a-f]+ in the core|file name libtcmalloc\S* in the core's list of mapped files)/)
      expect(heap.globals.version).toBe(truth.gperftools)
    }
    expect(heap.globals.layout.group).toBe(groupOfVersion(truth.gperftools))
    program.core.close()
  })
})

// Without even the file name (a library renamed to its soname), the structures alone must still
// pick the right layout group — groups that share most structures told apart by what differs —
// and name every release that lays out the same.
describe.each(fixtures.filter(f => f.config !== 'static').map(f => [f.id] as const))('the structures alone, %s', id => {
  it('tells the layout group from the structures and stays exact', async () => {
    const {program, truth} = await openCoreOnly(id)
    const lib = program.modules.find(m => /libtcmalloc/.test(m.module.path))!
    lib.module.path = lib.module.path.replace(/\.so\.4\..*$/, '.so.4')
    lib.module.buildId = null
    const heap = analyzeHeap(program)
    // The group, or the groups whose layouts read alike (C and D differ only in TLS toma does not read).
    const groups = /^structure of the core matched layout group ([A-J](?:, [A-J])*)$/.exec(heap.globals.versionHow)?.[1]?.split(', ')
    expect(groups).toContain(groupOfVersion(truth.gperftools))
    expect(groups).toContain(heap.globals.layout.group)
    const [first, last] = heap.globals.version!.split(' .. ')
    const versions = Object.keys(groupVersions())
    expect(versions.indexOf(truth.gperftools)).toBeGreaterThanOrEqual(versions.indexOf(first!))
    expect(versions.indexOf(truth.gperftools)).toBeLessThanOrEqual(versions.indexOf(last ?? first!))
    checkAgainstTruth(heap, truth)
    program.core.close()
  })
})

/** Every release toma has layouts for, oldest first. */
function groupVersions(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const g of 'ABCDEFGHIJ') for (const v of versionsOfGroup(g)) out[v] = g
  return out
}

it('says a cross-check line cannot disagree when both its figures come from a walk that is missing', async () => {
  // 2.6.1 (group E) read with 2.6.3's layout (F): the same page heap, central cache and size map,
  // but F's ThreadCache keeps size_ where E keeps size_left_, so no list of caches adds up and
  // thread_heaps_ is not found. The thread-cache objects then count as live on toma's side, and
  // TCMalloc's in-use figure, computed from the same empty walk, agrees: that is not a check.
  const e = fixtures.find(f => f.gperftools === '2.6.1')
  if (!e) return expect.fail('no 2.6.1 fixture')
  const {program, truth} = await openCoreOnly(e.id)
  const heap = analyzeHeap(program, {version: '2.6.3'})
  expect(heap.globals.threadHeaps).toBeNull()
  expect(heap.warnings.list.map(w => w.message)).toContain('ThreadCache::thread_heaps_ not found: objects in thread caches are counted as live')
  const line = (property: string) => heap.crossCheck.find(c => c.property === property)!
  for (const property of ['generic.current_allocated_bytes', 'tcmalloc.thread_cache_free_bytes']) {
    expect(line(property).toma).toBe(line(property).allocator)
    expect(line(property).notIndependent).toMatch(/same missing walk/)
  }
  expect(line('generic.current_allocated_bytes').toma).toBe(truth.counters['generic.current_allocated_bytes']! + truth.counters['tcmalloc.thread_cache_free_bytes']!)
  for (const property of ['tcmalloc.central_cache_free_bytes', 'tcmalloc.pageheap_free_bytes']) expect(line(property).notIndependent).toBeUndefined()
  program.core.close()
})
