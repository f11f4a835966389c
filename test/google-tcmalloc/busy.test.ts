import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {hex} from '../../src/errors.js'
import {googleActivity, googleLocksRead} from '../../src/google-tcmalloc/activity.js'
import {analyzeGoogleHeap, type GoogleHeap} from '../../src/google-tcmalloc/heap.js'
import type {AllocatorActivity} from '../../src/heap/heap-model.js'
import {LIVE} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import {addr, sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {testTemp} from '../helpers/test-temp.js'

/**
 * Busy google/tcmalloc cores (fixtures/google-tcmalloc-busy/README.md): four threads allocating and
 * freeing without pause, stopped by gdb inside tcmalloc with one of its locks held, or gcore'd from
 * outside at random moments. The truth is the process's own table of its blocks and each worker's
 * marker, read from the core, and gdb's frames and lock words (through tcmalloc's DWARF).
 */
const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc-busy', import.meta.url))
const IDS = fs.readdirSync(DIR).filter(d => fs.existsSync(path.join(DIR, d, 'core.sparse.br'))).sort()
const exeOf = (id: string) => path.join(DIR, `gtcbusy-${id.replace(/-(pageheap|central|random-\d+)$/, '')}`)

interface GdbFrame {
  function: string | null
}
interface BusyTruth {
  preWorkersAllocatedBytes: number
  live: Array<[string, number]>
  inFlight: Array<{tid: number; phase: 'mallocCalled' | 'mallocReturned' | 'freeCalled'; address: string | null; size: number | null; inTable: boolean}>
  locks: {held: Array<{name: string; sizeClass: number | null; address: string; lockword: number}>}
  threadsInTcmalloc: Array<{tid: number; frames: GdbFrame[]}>
}

/** The code that takes each lock, as gdb names its functions (inlined ones too): the page allocator's, a central free list's. */
const PAGE_LEVEL = /huge_page_allocator_internal|PageAllocator::|HugePageFiller|PageHeapSpinLockHolder/
const CENTRAL = /CentralFreeList/

/**
 * The proxies of small sampled objects, as gdb listed them from tcmalloc's own records: for a
 * small request it samples, tcmalloc (before 2026-07) moves the object to a span of its own and
 * keeps the object of the request's class it took first allocated, as StackTrace::proxy, while the
 * sample lives. Neither the program's table nor a marker names a proxy. Measured on the unstripped
 * executable (fixtures/build/gtc-busy/mongo-20240522-release/gtcbusy) with
 * `gdb -batch EXE CORE -x fixtures/tools/gtc-live-samples.py` (every live sample of the recorder):
 *   random-0: samples 29, live 9, with proxy 1: proxy 0x73b1bd778e00, sampled 0x10fffc00000, requested 1727, allocated 1792
 *   random-1: samples 29, live 12, with proxy 1: proxy 0x73b1bdf20000, sampled 0x10fffc2c000, requested 17521, allocated 20480
 *   pageheap: samples 25, live 11, with proxy 0
 * (random-0's also by `p *span->sampled_allocation_`: span 0x2e017fc6c400, SampledAllocation 0x2e017fc6dc88.)
 * The 2026-08 family has no StackTrace::proxy (its DWARF, gdb's ptype /o): none.
 */
/** gdb on mongo-20240522-release-random-0 (fixtures/build/gtc-busy's unstripped gtcbusy): Static::sampled_allocation_recorder_'s dead samples. */
const GDB_DEAD_SAMPLES = ['0x2e017fc6da08', '0x2e017fc6d008', '0x2e017fc6cd88', '0x2e017fc69470', '0x2e017fc68cf0', '0x2e017fc68a70', '0x2e017fc67c28', '0x2e017fc67530', '0x2e017fc66830', '0x2e017fc66520', '0x2e017fc65110', '0x2e017fc61780', '0x2e017fc5fa80', '0x2e017fc5e970', '0x2e017fc5e630', '0x2e017fc5daa0', '0x2e017fc5d570', '0x2e017fc5c458', '0x2e017fc5ac28', '0x2e017fe00000']

const GDB_PROXIES: Record<string, Array<{proxy: string; sampledObject: string; requested: number; allocated: number}>> = {
  'mongo-20240522-release-random-0': [{proxy: '0x73b1bd778e00', sampledObject: '0x10fffc00000', requested: 1727, allocated: 1792}],
  'mongo-20240522-release-random-1': [{proxy: '0x73b1bdf20000', sampledObject: '0x10fffc2c000', requested: 17521, allocated: 20480}],
}

/**
 * The locks of no class, as gdb read them on the 2026-08 cores (one process: the same addresses in
 * each), on the unstripped executable (fixtures/build/gtc-busy/2026-08-release/gtcbusy):
 *   set $cc = &'tcmalloc::tcmalloc_internal::Static::cpu_cache_'
 *   p $cc->freelist_.state_            {ptr_ = 0x2e3c7ff68000, len_ = 2}
 *   p &$cc->resize_[0].lock            0x2e3c7ff518d4     p $cc->resize_[0].lock.lockword_   0
 *   p &$cc->resize_[1].lock            0x2e3c7ff549d4     p $cc->resize_[1].lock.lockword_   0
 *   p &'tcmalloc::tcmalloc_internal::Static::span_allocator_'.metadata_lock_   0x562568d57e48 (span_allocator_+8), lockword_ 0
 * measured on 2026-08-release-random-0 and 2026-08-release-pageheap. mongo-20240522 has neither:
 * its slab counts no CPUs, and its span records are under pageheap_lock (PageHeapAllocator, no lock
 * of its own: ptype /o on its executable).
 */
const GDB_LOCKS_OF_NO_CLASS: Record<string, Array<{kind: string; cpu?: number; address: string; word: number}>> = Object.fromEntries(
  ['2026-08-release-random-0', '2026-08-release-pageheap'].map(id => [
    id,
    [
      {kind: 'span', address: '0x562568d57e48', word: 0},
      {kind: 'cpu', cpu: 0, address: '0x2e3c7ff518d4', word: 0},
      {kind: 'cpu', cpu: 1, address: '0x2e3c7ff549d4', word: 0},
    ],
  ]),
)

const truthOf = (id: string) => JSON.parse(fs.readFileSync(path.join(DIR, id, 'truth.json'), 'utf8')) as BusyTruth

/** gdb's threads inside tcmalloc that wait for a SpinLock (its slow path on the stack), and those that do not. */
function gdbWaiting(t: BusyTruth['threadsInTcmalloc'][number]): boolean {
  return t.frames.some(f => /SpinLock::SlowLock/.test(f.function ?? ''))
}

const opened: Core[] = []
afterAll(() => {
  for (const c of opened) c.close()
})

async function open(id: string): Promise<{program: Program; heap: GoogleHeap; activity: AllocatorActivity; truth: BusyTruth}> {
  const core = Core.open(await sparseCorePath(path.join(DIR, id, 'core.sparse.br')))
  opened.push(core)
  const program = Program.load(core, {exe: exeOf(id)})
  const heap = analyzeGoogleHeap(program)
  return {program, heap, activity: googleActivity(program, heap), truth: truthOf(id)}
}

/** Every live slot of the model: its address and size (the class's). */
function liveBlocks(heap: GoogleHeap): Map<number, number> {
  const out = new Map<number, number>()
  const {spans, state} = heap
  for (let s = 0; s < spans.count; s++) {
    for (let k = 0; k < spans.objectCount[s]!; k++) if (state[spans.firstObject[s]! + k] === LIVE) out.set(spans.start[s]! + k * spans.objectSize[s]!, spans.objectSize[s]!)
  }
  return out
}

/** The address of slot `slot` of the model. */
function slotAddress(heap: GoogleHeap, slot: number): number {
  const {spans} = heap
  for (let s = 0; s < spans.count; s++) {
    const k = slot - spans.firstObject[s]!
    if (k >= 0 && k < spans.objectCount[s]!) return spans.start[s]! + k * spans.objectSize[s]!
  }
  throw new Error(`slot ${slot} in no span`)
}

/** The proxies toma read, each with its sample's object (the sampled span's start) and request. */
function proxiesOf(heap: GoogleHeap): Array<{proxy: number; sampledObject: number; requested: number}> {
  return Array.from(heap.sampled.span, (s, i) => ({slot: heap.sampledProxy[i]!, s, i}))
    .filter(p => p.slot >= 0)
    .map(({slot, s, i}) => ({proxy: slotAddress(heap, slot), sampledObject: heap.spans.start[s]!, requested: heap.sampled.requestedSize[i]!}))
}

/** What tcmalloc hands out for a request of n bytes: its smallest class that holds n, else whole pages. */
function allocatedFor(heap: GoogleHeap, n: number): number {
  const classes = Array.from(heap.classes.size).filter(c => c >= n)
  return classes.length ? Math.min(...classes) : Math.ceil(n / heap.pageSize) * heap.pageSize
}

/**
 * Which of the blocks beyond the program's record were taken for threads still inside malloc: a
 * choice of at most one block per such thread, of the size its request gets, that leaves exactly
 * the bytes allocated before the workers started. Null when there is none: a block unexplained.
 */
function takenInsideMalloc(sizes: number[], pending: number[], preWorkers: number): number[] | null {
  const total = sizes.reduce((a, b) => a + b, 0)
  const choose = (from: number[], left: number[], sum: number): number[] | null => {
    if (total - sum === preWorkers) return []
    for (let i = 0; i < left.length; i++) {
      const k = from.indexOf(left[i]!)
      if (k < 0) continue
      const rest = choose([...from.slice(0, k), ...from.slice(k + 1)], left.slice(i + 1), sum + left[i]!)
      if (rest) return [left[i]!, ...rest]
    }
    return null
  }
  return choose(sizes, pending, 0)
}

describe('busy google/tcmalloc processes, stopped inside tcmalloc', () => {
  it('each executable is linked with a release build of tcmalloc (-DNDEBUG), as its build.json says', () => {
    for (const exe of new Set(IDS.map(exeOf))) {
      const build = JSON.parse(fs.readFileSync(`${exe}.build.json`, 'utf8')) as {mode: string; cxxflags: string}
      expect(build.mode, exe).toBe('release')
      expect(build.cxxflags, exe).toMatch(/-O2 .*-DNDEBUG/)
    }
  })

  it('the set holds what it is for: a held pageheap_lock, a held central free list lock, threads inside tcmalloc, and cores taken from outside', () => {
    const truths = new Map(IDS.map(id => [id, truthOf(id)]))
    expect([...truths.values()].some(t => t.locks.held.some(l => l.name === 'pageheap_lock'))).toBe(true)
    expect([...truths.values()].some(t => t.locks.held.some(l => l.name === 'central free list'))).toBe(true)
    expect([...truths.values()].every(t => t.threadsInTcmalloc.length > 0 || t.inFlight.length > 0)).toBe(true)
    expect(IDS.filter(id => /-random-/.test(id)).length).toBeGreaterThanOrEqual(2)
  })

  it.each(IDS)('%s: live exactly as the program recorded, but for the blocks in flight; no warning that is not in flight; threads inside tcmalloc as gdb saw them; held locks with their holders', {timeout: 120_000}, async id => {
    const {heap, activity, truth} = await open(id)
    expect(heap.warnings.list.filter(w => !w.inFlight)).toEqual([])
    expect(heap.damage.findings).toEqual([])

    // Every block the program recorded is live.
    const live = liveBlocks(heap)
    const recorded = new Set(truth.live.map(([a]) => addr(a)))
    expect([...recorded].filter(a => !live.has(a))).toEqual([])
    // Beyond the record: the blocks allocated before the workers started (tcmalloc's own count of
    // their bytes, taken then, is in the truth), the blocks the markers name (returned by malloc and
    // not yet recorded; erased and not yet freed), and for each thread still inside malloc at most
    // one block of a class that holds its request (tcmalloc had taken it, the program not yet seen it).
    // And the proxies of small sampled objects (GDB_PROXIES): each the proxy of a sample whose object
    // the program recorded with the size tcmalloc's record has, of the class that request gets.
    const named = new Set(truth.inFlight.filter(f => f.address !== null && !f.inTable).map(f => addr(f.address!)))
    const recordedSize = new Map(truth.live.map(([a, n]) => [addr(a), n]))
    const proxies = proxiesOf(heap)
    for (const p of proxies) {
      expect(recordedSize.get(p.sampledObject) ?? (named.has(p.sampledObject) ? p.requested : null), hex(p.sampledObject)).toBe(p.requested)
      expect(live.get(p.proxy), hex(p.proxy)).toBe(allocatedFor(heap, p.requested))
      expect(recorded.has(p.proxy) || named.has(p.proxy)).toBe(false)
    }
    const proxy = new Set(proxies.map(p => p.proxy))
    const unexplained = [...live].filter(([a]) => !recorded.has(a) && !named.has(a) && !proxy.has(a))
    const pending = truth.inFlight.filter(f => f.phase === 'mallocCalled').map(f => allocatedFor(heap, f.size!))
    const taken = takenInsideMalloc(unexplained.map(([, size]) => size), pending, truth.preWorkersAllocatedBytes)
    expect(taken).not.toBeNull()
    console.log(`${id}: ${live.size} live, ${recorded.size} recorded, ${named.size} named by markers, ${proxy.size} proxies of sampled objects, ${taken!.length} taken by a thread inside malloc, ${unexplained.length - taken!.length} from before the workers`)

    // The threads inside tcmalloc are the ones gdb saw inside it.
    expect(activity.threads.map(t => t.tid).sort()).toEqual(truth.threadsInTcmalloc.map(t => t.tid).sort())
    // The held locks, at gdb's addresses with gdb's words; each held by the one thread inside tcmalloc
    // that gdb saw not waiting, the others waiting.
    expect(activity.locks.map(l => ({address: l.address, word: l.word}))).toEqual(truth.locks.held.map(l => ({address: addr(l.address), word: l.lockword})))
    for (const lock of activity.locks) {
      const inCode = truth.threadsInTcmalloc.filter(t => t.frames.some(f => (lock.sizeClass === null ? PAGE_LEVEL : CENTRAL).test(f.function ?? '')))
      expect(lock.heldBy).toEqual(inCode.filter(t => !gdbWaiting(t)).map(t => t.tid))
      expect(lock.waiting.sort()).toEqual(inCode.filter(gdbWaiting).map(t => t.tid).sort())
    }
    expect(activity.pageHeapLockKnown).toBe(true)
  })

  it("the proxies toma reads are gdb's, in each core; a family without StackTrace::proxy (2026-08) has none", {timeout: 120_000}, async () => {
    for (const id of IDS) {
      const {heap} = await open(id)
      const want = (GDB_PROXIES[id] ?? []).map(p => ({proxy: addr(p.proxy), sampledObject: addr(p.sampledObject), requested: p.requested}))
      expect(proxiesOf(heap), id).toEqual(want)
      for (const p of GDB_PROXIES[id] ?? []) expect(allocatedFor(heap, p.requested), id).toBe(p.allocated)
      expect(heap.layout.sampledAllocation?.proxy, id).toBe(id.startsWith('2026-08') ? undefined : 32)
    }
  })

  it("each CPU's resize lock and the span allocator's lock are read at gdb's addresses, with gdb's words; mongo-20240522 has neither", {timeout: 120_000}, async () => {
    for (const id of [...Object.keys(GDB_LOCKS_OF_NO_CLASS), ...IDS.filter(i => i.startsWith('mongo-'))]) {
      const {program, heap} = await open(id)
      const read = googleLocksRead(program, heap).filter(l => l.kind === 'cpu' || l.kind === 'span')
      expect(read.map(l => ({kind: l.kind, ...(l.cpu === undefined ? {} : {cpu: l.cpu}), address: hex(l.address), word: l.word})), id).toEqual(GDB_LOCKS_OF_NO_CLASS[id] ?? [])
    }
  })

  it("toma leaks counts a proxy as tcmalloc's own, not as a leak; no root lies in tcmalloc's metadata arena", {timeout: 120_000}, async () => {
    const id = 'mongo-20240522-release-random-0'
    const work = testTemp('toma-gtc-proxy-')
    try {
      const indexPath = path.join(work, 'core.toma-index')
      const r = await runToma(['leaks', await sparseCorePath(path.join(DIR, id, 'core.sparse.br')), '--exe', exeOf(id), '--index', indexPath, '--json'])
      expect(r.status).toBe(0)
      const leaks = JSON.parse(r.stdout) as {starts: Array<{address: string}>; allocatorInternal: {objects: number; bytes: number}}
      expect(leaks.starts.map(s => s.address)).not.toContain(GDB_PROXIES[id]![0]!.proxy)
      expect(leaks.allocatorInternal).toEqual({objects: 1, bytes: 1792})
      // The recorder's dead samples (gdb: the all_ list, dead != nullptr; 640 B each) keep the
      // addresses of blocks long freed, some since reused: 1,460 roots lay in that arena, and
      // 0x10fffcc8000, which the program holds only XOR-ed in its table, was reachable through them.
      const index = new HeapIndex(IndexFile.open(indexPath)!)
      try {
        const roots = index.rootTable()
        const inDead = Array.from(roots.address).filter(a => GDB_DEAD_SAMPLES.some(d => a >= addr(d) && a < addr(d) + 640))
        expect(inDead.map(hex)).toEqual([])
        expect(Array.from(roots.address).filter(a => Math.floor(a / 2 ** 42) % 8 === 3).map(hex)).toEqual([])
      } finally {
        index.close()
      }
      expect(leaks.starts.map(s => s.address)).toContain('0x10fffcc8000')
      // find-object and path on the proxy say whose it is, as leaks does.
      const found = await runToma(['find-object', GDB_PROXIES[id]![0]!.proxy, '--index', indexPath, '--json'])
      expect(JSON.parse(found.stdout).object.held).toMatchObject({reachable: false, allocatorOwn: true})
      const pathText = await runToma(['path', GDB_PROXIES[id]![0]!.proxy, '--index', indexPath])
      expect(pathText.stdout).toContain("TCMalloc's own: no root of the program reaches it")
    } finally {
      fs.rmSync(work, {recursive: true, force: true})
    }
  })

  it('a warning about a structure whose lock was held is marked in flight; one about another class is not', async () => {
    const id = IDS.find(i => truthOf(i).locks.held.some(l => l.name === 'central free list'))!
    const {program, heap, truth} = await open(id)
    const lock = truth.locks.held.find(l => l.name === 'central free list')!
    const manager = heap.globals.at.transferCache!
    const stride = heap.layout.transferCache.stride
    // Warnings of the kind a walk adds, about the held class's transfer cache entry and a span of
    // the class, and about the next class's entry.
    const spanOfClass = [...Array(heap.spans.count).keys()].find(s => heap.spans.tcmallocClass[s] === lock.sizeClass)!
    heap.warnings.add('transfer-cache', 'held class', manager + lock.sizeClass! * stride + 8)
    heap.warnings.add('span', 'a span of the held class', heap.spans.record[spanOfClass]!)
    heap.warnings.add('transfer-cache', 'another class', manager + (lock.sizeClass! + 1) * stride + 8)
    googleActivity(program, heap)
    const marked = Object.fromEntries(heap.warnings.list.map(w => [w.message, w.inFlight ?? null]))
    expect(marked['held class']).toMatch(/central free list lock of class \d+ \(\d+ B\) was held/)
    expect(marked['a span of the held class']).toMatch(/central free list lock/)
    expect(marked['another class']).toBeNull()
  })

  it('toma damage names the held lock and its holder', {timeout: 120_000}, async () => {
    const id = IDS.find(i => truthOf(i).locks.held.some(l => l.name === 'pageheap_lock'))!
    const truth = truthOf(id)
    const work = testTemp('toma-gtc-busy-')
    try {
      const r = await runToma(['damage', await sparseCorePath(path.join(DIR, id, 'core.sparse.br')), '--exe', exeOf(id), '--index', path.join(work, 'core.toma-index'), '--json'])
      expect(r.status).toBe(0)
      const locks = JSON.parse(r.stdout).locks as Array<{name: string; address: string; heldBy: number[]}>
      const holder = truth.threadsInTcmalloc.filter(t => !gdbWaiting(t)).map(t => t.tid)
      expect(locks).toContainEqual(expect.objectContaining({address: truth.locks.held[0]!.address, heldBy: holder}))
    } finally {
      fs.rmSync(work, {recursive: true, force: true})
    }
  })
})
