import path from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {pthreadAddress} from '../../src/program/thread-pointer.js'
import {addr} from '../helpers/fixture-core.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {ARM64_64K_FIXTURE, ARM64_FIXTURE, ARM64_KERNEL_FIXTURE, ARM64_P64_FIXTURE, ARM64_PIE_FIXTURE, ARM64_SAMPLED_FIXTURE, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {checkAgainstHeapSample} from './heap-sample.js'
import {checkAgainstTruth} from './live-set.js'

// Debian 12's arm64 gperftools 2.10 in a QEMU-user core (fixtures/arm64/README.md): the heap model
// reads it as it reads the x86-64 cores, exactly, with the library found through link_map. With
// 64 KiB kernel pages TCMalloc's pages are still 8 KiB (kPageShift 13, Debian's build); only the
// system's allocations and releases follow the kernel's page (the page heap returns no run smaller
// than 64 KiB: the counters differ from the 4 KiB run's, and the model equals them). TCMalloc's own
// page is the build's: gperftools 2.10 configured --with-tcmalloc-pagesize=64 for aarch64 has
// 64 KiB pages and 81 size classes, read from the library. With heap sampling on, the sampled
// objects and their stacks equal GetHeapSample's text: Static::sampled_objects_ (hidden) lies
// before pageheap_ on Debian's arm64 build, not before central_cache_ as on x86-64
// (src/tcmalloc/static-positions.ts); found at central_cache_ − 0x80, the list check failed and
// the samples came in address order.
let opened: ReturnType<typeof openArm64Fixture> | undefined
const fixture = () => (opened ??= openArm64Fixture())
afterAll(async () => (await opened)?.core.close())

it.each([
  {pageSize: 4096, tcmallocPage: 8192, classes: 85, dir: ARM64_FIXTURE, name: path.basename(ARM64_FIXTURE)},
  {pageSize: 65536, tcmallocPage: 8192, classes: 85, dir: ARM64_64K_FIXTURE, name: path.basename(ARM64_64K_FIXTURE)},
  {pageSize: 65536, tcmallocPage: 65536, classes: 81, dir: ARM64_P64_FIXTURE, name: path.basename(ARM64_P64_FIXTURE)},
  {pageSize: 4096, tcmallocPage: 8192, classes: 85, dir: ARM64_SAMPLED_FIXTURE, name: path.basename(ARM64_SAMPLED_FIXTURE)},
])('aarch64 gperftools 2.10, $pageSize-byte kernel pages, $tcmallocPage-byte TCMalloc pages ($name): every live object, bytes per state equal to TCMalloc\'s counters, the samples GetHeapSample\'s', async ({tcmallocPage, classes, dir}) => {
  const {program, truth, core} = dir === ARM64_FIXTURE ? await fixture() : await openArm64Fixture(dir)
  try {
    const heap = analyzeHeap(program)
    expect(heap.globals.version).toBe(truth.gperftools)
    expect(heap.pageSize).toBe(tcmallocPage)
    expect(heap.globals.sizes.count - 1).toBe(classes)
    checkAgainstTruth(heap, truth)
    if (truth.heapSample) {
      expect(heap.warnings.list).toEqual([])
      checkAgainstHeapSample(heap.sampled, truth.heapSample)
    } else expect(heap.sampled.span.length).toBe(0)
    // Each thread's cache, its owner through ThreadCache::tid_ (pthread_t): the struct pthread glibc's
    // lists give each thread where the core records no thread pointer (program/thread-pointer.ts).
    // As on x86-64 (heap.test.ts), every cache belongs to a live thread (2.10 keeps the main thread's
    // first cache, made before its thread-specific data was set up, with its pthread_t too).
    const tids = new Set(truth.threads.map(t => t.tid))
    expect(heap.threadCaches.length).toBe(5)
    for (const c of heap.threadCaches) expect(tids.has(c.tid!), `cache ${c.address.toString(16)} tid ${c.tid}`).toBe(true)
  } finally {
    if (dir !== ARM64_FIXTURE) core.close()
  }
})

// The PIE build: no gdb view (gdb-multiarch does not relocate it without the code pages); its load
// bias is AT_PHDR − PT_PHDR, checked against AT_ENTRY − e_entry, and the model is as exact.
it('aarch64 PIE: the executable at QEMU\'s load bias, its libraries through link_map, the heap exact', async () => {
  const {core, program, truth} = await openArm64Fixture(ARM64_PIE_FIXTURE)
  try {
    expect(program.executable?.module.loadBias).toBe(0x5500000000)
    expect(core.modulesFrom).toBe('link_map (no NT_FILE): r_debug through heapdemo\'s DT_DEBUG, load bias 0x5500000000')
    expect(program.modules.map(m => path.basename(m.module.path)).sort()).toEqual(['heapdemo', 'ld-linux-aarch64.so.1', 'libc.so.6', 'libgcc_s.so.1', 'libm.so.6', 'libpthread.so.0', 'libstdc++.so.6', 'libtcmalloc.so.4'])
    for (const t of core.threads) expect(pthreadAddress(program, t)).toBe(addr(truth.threads.find(x => x.tid === t.tid)!.pthread))
    const heap = analyzeHeap(program)
    checkAgainstTruth(heap, truth)
  } finally {
    core.close()
  }
})

// The kernel's core and gdb's gcore of one process in an arm64 VM (fixtures/generate-arm64-kernel.sh):
// modules from NT_FILE, each thread's pointer from NT_ARM_TLS; the model as exact on both, and each
// thread cache's owner the thread whose struct pthread lies at tp − sizeof(struct pthread).
it.each(['core.br', 'gcore.br'])('aarch64 in a VM (%s): the heap exact, every cache a live thread\'s', async name => {
  const {core, program, truth} = await openArm64Fixture(ARM64_KERNEL_FIXTURE, name)
  try {
    expect(core.modulesFrom).toBe('NT_FILE')
    const heap = analyzeHeap(program)
    expect(heap.globals.version).toBe(truth.gperftools)
    checkAgainstTruth(heap, truth)
    const tids = new Set(truth.threads.map(t => t.tid))
    expect(heap.threadCaches.length).toBe(5)
    for (const c of heap.threadCaches) expect(tids.has(c.tid!), `cache ${c.address.toString(16)} tid ${c.tid}`).toBe(true)
  } finally {
    core.close()
  }
})
