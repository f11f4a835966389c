import {afterAll, expect, it} from 'vitest'
import {heapObjects} from '../../src/heap/objects.js'
import {ROOT_KIND_NAMES} from '../../src/graph/csr.js'
import {findRoots} from '../../src/graph/scan.js'
import {addr} from '../helpers/fixture-core.js'
import {ARM64_64K_FIXTURE, ARM64_FIXTURE, ARM64_P64_FIXTURE, ARM64_SAMPLED_FIXTURE, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {unreachableObjects} from '../helpers/unreachable.js'

const opened = new Map<string, ReturnType<typeof openArm64Fixture>>()
const fixture = (dir: string) => opened.get(dir) ?? opened.set(dir, openArm64Fixture(dir)).get(dir)!
afterAll(async () => {
  for (const o of opened.values()) (await o).core.close()
})

// The aarch64 fixture's roots (registers, stacks cut at each thread's struct pthread found on glibc's lists, the
// modules' data found through link_map, mappings, glibc's stack cache) reach every object the
// program still holds: the unreachable ones it recorded are exactly its deliberate leaks, as on x86-64.
// So with 64 KiB kernel pages (QEMU_PAGESIZE): the modules' data pages, the stacks and TLS blocks
// glibc maps in 64 KiB pages; and with gperftools' own build with 64 KiB TCMalloc pages, whose
// allocators are found by their symbols; and with heap sampling on, whose StackTraces (TCMalloc's
// metadata, found through stacktrace_allocator_ before pageheap_ and each sampled span) are no roots.
const DEBIAN = /\(position before pageheap_ \(Debian arm64\)\)/.source
const debianAllocators = [new RegExp(`^span_allocator_ at 0x[0-9a-f]+ ${DEBIAN}: 412 in use, `), new RegExp(`^stacktrace_allocator_ at 0x[0-9a-f]+ ${DEBIAN}: 11 in use, `)]
it.each([
  {pageSize: 4096, tcmalloc: 'Debian', dir: ARM64_FIXTURE, allocators: debianAllocators},
  {pageSize: 65536, tcmalloc: 'Debian', dir: ARM64_64K_FIXTURE, allocators: debianAllocators},
  {pageSize: 4096, tcmalloc: 'Debian (sampling on)', dir: ARM64_SAMPLED_FIXTURE, allocators: [new RegExp(`^span_allocator_ at 0x[0-9a-f]+ ${DEBIAN}: \\d+ in use, `), new RegExp(`^stacktrace_allocator_ at 0x[0-9a-f]+ ${DEBIAN}: \\d+ in use, `)]},
  {pageSize: 65536, tcmalloc: '64 KiB-page', dir: ARM64_P64_FIXTURE, allocators: [/^span_allocator_ at 0x[0-9a-f]+ \(symbol\): \d+ in use, /, /^stacktrace_allocator_ at 0x[0-9a-f]+ \(symbol\): \d+ in use, /]},
])('aarch64, $pageSize-byte pages, $tcmalloc TCMalloc: exactly the deliberate leaks are unreachable among what the program allocated', async ({dir, allocators}) => {
  const {program, truth} = await fixture(dir)
  const {heap, graph, unreachable} = unreachableObjects(program)
  for (const o of truth.objects) expect(unreachable.has(addr(o.address)), `${o.name} leaked=${o.leaked}`).toBe(o.leaked)
  const recorded = new Set(truth.live.map(([a]) => addr(a)))
  expect([...unreachable].filter(a => recorded.has(a)).sort()).toEqual(truth.objects.filter(o => o.leaked).map(o => addr(o.address)).sort())
  // Each object the program holds in one place only is reached from there: its thread's stack
  // (not another's: the stacks are cut at each thread's struct pthread), a global, an exited
  // thread's cached stack (glibc's list), an anonymous mapping.
  const objects = heapObjects(heap)
  const kinds = new Set<string>()
  for (const o of truth.objects.filter(o => o.heldBy)) {
    const slot = objects.findObject(addr(o.address))!.index
    const from = [...Array(graph.rootCount).keys()].filter(r => graph.rootTo[r] === slot).map(r => ({kind: ROOT_KIND_NAMES[graph.rootKind[r]!], thread: graph.rootThread[r]}))
    const h = o.heldBy!
    kinds.add(h.kind)
    const want = h.kind === 'stack' ? {kind: 'stack', thread: h.tid} : h.kind === 'global' ? {kind: 'global', thread: -1} : h.kind === 'mapping' ? {kind: 'mapping', thread: -1} : {kind: 'cached-stack', thread: -1}
    expect(from, o.name).toContainEqual(want)
    if (h.kind === 'stack') expect(from.filter(f => f.kind === 'stack' && f.thread !== h.tid), o.name).toEqual([])
  }
  expect([...kinds].sort()).toEqual(['cachedStack', 'global', 'mapping', 'stack'])
  // Finding the roots said nothing: every thread's struct pthread was found, and TCMalloc's
  // span_allocator_ and stacktrace_allocator_ at their Debian arm64 positions (metadata.ts) are
  // PageHeapAllocators whose in-use counts are the x86-64 build's for the same program (with 64 KiB
  // TCMalloc pages, found by their symbols in our build).
  const found = findRoots(program, heap)
  expect(found.warnings.list).toEqual([])
  expect(found.set.how.filter(h => /^(span|stacktrace)_allocator_/.test(h))).toEqual(allocators.map(a => expect.stringMatching(a)))
  // GetHeapSample's table: one StackTraceTable::Entry per sample line, all freed when it returned.
  // Each copies a whole StackTrace, whose words past depth are stale stack words: without this
  // allocator's free list deadFrame1's address (in a worker's stack when it was sampled) kept it reachable.
  if (truth.heapSample) {
    const samples = truth.heapSample.split('\n').filter(l => / @ /.test(l) && !l.startsWith('heap profile:')).length
    expect(found.set.how).toContainEqual(expect.stringMatching(new RegExp(`^StackTraceTable::Entry allocator at 0x[0-9a-f]+ \\(symbol\\): 0 in use, ${samples} freed, `)))
  }
})
