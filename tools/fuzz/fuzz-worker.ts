// One child of `npm run fuzz` (tools/fuzz/fuzz.ts): takes one batch of mutants of one fixture core,
// analyses each damaged view of the core (heap model, pointer scan, reachability) in-process and
// reports each outcome to the parent, which times it, samples its memory and kills a hung child.
// Mutants never copy the core: Core.open reads it through an overlay of patched bytes.
import fs from 'node:fs'
// The parent forks this file from its snapshot of dist/ (so a rebuild during a long run changes
// nothing under it): the imports below resolve inside that copy.
import {Core} from '../../src/core/core.js'
import type {FileOverlay} from '../../src/core/file-reader.js'
import {TomaError} from '../../src/errors.js'
import {reachableFromRoots} from '../../src/graph/reachability.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {type ProgramOptions, Program} from '../../src/program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../../src/tcmalloc/heap.js'
import {SPAN} from '../../src/tcmalloc/layout.js'
import {LIVE} from '../../src/heap/states.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import {asHeapModel} from '../../src/tcmalloc/model.js'

/** Deterministic 32-bit generator (mulberry32) for one mutant: the same seed and id give the same damage. */
function generator(seed: number, id: number) {
  let a = (seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  return {int: (n: number) => Math.floor(next() * n), pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!, chance: (p: number) => next() < p}
}

/** What a fuzz run compares: live set and bytes per state (the answers a user reads). */
function answer(heap: TcmallocHeap) {
  const s = heap.spans
  let count = 0
  let bytes = 0
  let hash = 0
  let xor = 0
  for (let i = 0; i < s.count; i++) {
    if (s.location[i] !== IN_USE) continue
    for (let k = 0; k < s.objectCount[i]; k++) {
      if (heap.state[s.firstObject[i] + k] !== LIVE) continue
      const a = s.start[i] + k * s.objectSize[i]
      count++
      bytes += s.objectSize[i]
      hash = (hash + (a % 1_000_000_007)) % 1_000_000_007
      xor = (xor ^ (a % 0x1_0000_0000)) >>> 0
    }
  }
  return `${count}/${bytes}/${hash}/${xor}/${Array.from(heap.totals.objects).join(',')}/${Array.from(heap.totals.bytes).join(',')}`
}

function analyse(corePath: string, flags: ProgramOptions, overlay: FileOverlay | undefined) {
  const program = Program.load(Core.open(corePath, overlay), flags)
  try {
    const heap = analyzeHeap(program)
    const graph = scanHeapGraph(program, asHeapModel(heap))
    reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
    const crossOk = heap.crossCheck.every(c => c.toma === c.allocator)
    return {answer: answer(heap), warnings: heap.warnings.total, graphWarnings: graph.warnings.total, crossOk}
  } finally {
    program.core.close()
  }
}

/** Addresses of the allocator's structures in the clean core: where plausible damage goes. */
function targets(corePath: string, flags: ProgramOptions) {
  const program = Program.load(Core.open(corePath), flags)
  const heap = analyzeHeap(program)
  const memory = program.core.memory
  const g = heap.globals
  const L = g.layout
  const s = heap.spans
  const spans = [...Array(s.count).keys()].map(i => ({record: s.record[i], page: s.start[i] / L.pageSize, pages: s.pages[i], cl: s.sizeClass[i]}))
  const freeObjects: number[] = []
  const liveObjects: number[] = []
  for (let i = 0; i < s.count; i++) {
    if (s.location[i] !== IN_USE || s.sizeClass[i] === 0) continue
    for (let k = 0; k < s.objectCount[i]; k++) {
      const a = s.start[i] + k * s.objectSize[i]
      if (heap.state[s.firstObject[i] + k] === LIVE) liveObjects.push(a)
      else freeObjects.push(a)
    }
  }
  const pageMapEntry = (page: number) => {
    const pm = L.pageMap
    const base = g.pageHeap + L.pageHeap.pagemap
    if (pm.kind === 2) {
      const leaf = memory.readU64(base + Math.floor(page / 2 ** pm.leafBits) * 8)
      return leaf ? leaf + (page % 2 ** pm.leafBits) * 8 : undefined
    }
    const rootPtr = memory.readU64(base)
    const i1 = Math.floor(page / 2 ** (pm.interiorBits + pm.leafBits))
    const i2 = Math.floor(page / 2 ** pm.leafBits) % 2 ** pm.interiorBits
    const mid = rootPtr && memory.readU64(rootPtr + i1 * 8)
    const leaf = mid && memory.readU64(mid + i2 * 8)
    return leaf ? leaf + (page % 2 ** pm.leafBits) * 8 : undefined
  }
  const pageMapEntries: number[] = []
  for (const sp of spans) for (const p of [sp.page, sp.page + sp.pages - 1]) {
    const at = pageMapEntry(p)
    if (at !== undefined) pageMapEntries.push(at)
  }
  const central: number[] = []
  for (let cl = 1; cl < g.sizes.count; cl++) central.push(g.centralCache + cl * L.central.stride)
  const caches = heap.threadCaches.map(c => c.address)
  const listHeads: number[] = []
  for (const c of caches) for (let cl = 1; cl < g.sizes.count; cl++) listHeads.push(c + L.threadCache.list + cl * L.threadCache.freeListSize)
  const fileOffset = (a: number) => {
    const seg = memory.segmentAt(a)
    return seg && a - seg.start < seg.presentSize ? seg.fileOffset + (a - seg.start) : undefined
  }
  const heapSegments = memory.segments.filter(seg => seg.start <= s.start[0] && s.start[0] < seg.end)
  const notes: Array<{offset: number; size: number}> = []
  const fd = fs.openSync(corePath, 'r')
  const head = Buffer.alloc(64)
  fs.readSync(fd, head, 0, 64, 0)
  const phoff = Number(head.readBigUInt64LE(32))
  const phnum = head.readUInt16LE(56)
  const table = Buffer.alloc(phnum * 56)
  fs.readSync(fd, table, 0, table.length, phoff)
  fs.closeSync(fd)
  for (let i = 0; i < phnum; i++) {
    if (table.readUInt32LE(i * 56) === 4) notes.push({offset: Number(table.readBigUInt64LE(i * 56 + 8)), size: Number(table.readBigUInt64LE(i * 56 + 32))})
  }
  const size = program.core.size
  const systemPages = Math.ceil((memory.readU64(g.pageHeap + L.pageHeap.stats + L.stats.systemBytes) ?? 0) / L.pageSize)
  program.core.close()
  return {L, g, spans, freeObjects, liveObjects, pageMapEntries, central, caches, listHeads, fileOffset, heapSegments, notes, phoff, phnum, size, systemPages, classPages: Array.from(g.sizes.pages)}
}

/** One mutant: a list of patches (file offset, bytes) and maybe a cut size, with a label saying what was damaged. */
type Patch = {offset: number; bytes: Buffer}
function mutate(t: ReturnType<typeof targets>, rnd: ReturnType<typeof generator>) {
  const patches: Patch[] = []
  const u64 = (addr: number, value: number) => {
    const off = t.fileOffset(addr)
    if (off === undefined) return
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt.asUintN(64, BigInt(Math.floor(value))))
    patches.push({offset: off, bytes: b})
  }
  const u32 = (addr: number, value: number) => {
    const off = t.fileOffset(addr)
    if (off === undefined) return
    const b = Buffer.alloc(4)
    b.writeUInt32LE(value >>> 0)
    patches.push({offset: off, bytes: b})
  }
  const span = () => rnd.pick(t.spans)
  const pointerLike = () =>
    rnd.pick([
      () => span().record,
      () => span().record + 8,
      () => rnd.pick(t.freeObjects) ?? 0,
      () => rnd.pick(t.liveObjects) ?? 0,
      () => (rnd.pick(t.freeObjects) ?? 0) + 8,
      () => rnd.pick(t.listHeads),
      () => rnd.pick(t.caches),
      () => 0,
      () => 2 ** 64 - 1,
      () => span().page * t.L.pageSize + t.L.pageSize * (t.systemPages + rnd.int(1000)),
    ])()
  const kinds: Record<string, () => void | 'xor' | {size: number}> = {
    'span-length': () => {
      const sp = span()
      const other = span()
      u64(sp.record + SPAN.length, rnd.pick([other.pages, sp.pages + 1, sp.pages - 1, (t.classPages[sp.cl] ?? 1) + 1, 2 ** 24, 2 ** 30, 2 ** 35 - 1, 0, t.systemPages + 1, t.systemPages * 4, 2 ** rnd.int(40), other.page + other.pages - sp.page]))
    },
    'span-start': () => {
      const sp = span()
      u64(sp.record + SPAN.start, rnd.pick([span().page, sp.page + 1, sp.page - 1, sp.page + t.systemPages + 7, 0, 2 ** 35 - 1]))
    },
    'span-bits': () => {
      const sp = span()
      const word = rnd.int(2 ** 32)
      const cl = rnd.pick([sp.cl + 1, sp.cl - 1, t.classPages.length, t.classPages.length - 1, 0, 255, rnd.int(t.classPages.length)])
      const loc = rnd.int(4)
      const ref = rnd.pick([0, 1, 0xffff, rnd.int(0x10000)])
      u32(sp.record + SPAN.bits, rnd.pick([word, ((loc << 24) | ((cl & 0xff) << 16) | ref) >>> 0]))
    },
    'span-objects': () => u64(span().record + SPAN.objects, pointerLike()),
    'span-links': () => u64(span().record + rnd.pick([SPAN.next, SPAN.prev]), pointerLike()),
    'pagemap-entry': () => u64(rnd.pick(t.pageMapEntries), rnd.pick([span().record, 0, span().record + 8, pointerLike()])),
    'central-counter': () => {
      const c = rnd.pick(t.central)
      const which = rnd.pick(['counter', 'numSpans', 'usedSlots'] as const)
      const off = t.L.central[which]
      if (which === 'usedSlots') u32(c + off, rnd.pick([64, 65, -1, 1, 2, 2 ** 31]))
      else u64(c + off, rnd.pick([1, 2, 2 ** 32, 2 ** 53, rnd.int(1000)]))
    },
    'transfer-slot': () => u64(rnd.pick(t.central) + t.L.central.slots + rnd.int(64) * 16 + rnd.pick([0, 8]), pointerLike()),
    'thread-cache-list': () => {
      const h = rnd.pick(t.listHeads)
      if (rnd.chance(0.5)) u64(h + t.L.freeList.list, pointerLike())
      else u32(h + t.L.freeList.length, rnd.pick([1, 2, 65, 2 ** 24, 2 ** 31, 2 ** 32 - 1]))
    },
    'thread-cache-next': () => u64(rnd.pick(t.caches) + t.L.threadCache.next, pointerLike()),
    'free-link': () => {
      const count = 1 + rnd.int(4)
      for (let k = 0; k < count; k++) u64(rnd.pick(t.freeObjects), pointerLike())
    },
    'pageheap-free': () => u64(t.g.pageHeap + t.L.pageHeap.free + 8 * rnd.int(Math.floor((t.L.pageHeap.stats - t.L.pageHeap.free) / 8)), pointerLike()),
    'global-word': () => {
      const base = rnd.pick([t.g.pageHeap, t.g.centralCache, t.g.sizeMap ?? t.g.pageHeap])
      u64(base + 8 * rnd.int(256), pointerLike())
    },
    'bit-flips': () => {
      const n = 1 + rnd.int(32)
      for (let k = 0; k < n; k++) {
        let off: number
        if (rnd.chance(0.7)) {
          const seg = rnd.pick(t.heapSegments)
          off = seg.fileOffset + rnd.int(seg.presentSize)
        } else off = rnd.int(t.size)
        patches.push({offset: off, bytes: Buffer.of(1 << rnd.int(8))})
      }
      // A flip is an xor: resolved against the file's byte when the overlay is built.
      return 'xor'
    },
    'truncate': () => {
      const boundary = rnd.pick([
        () => t.fileOffset(span().record),
        () => t.fileOffset(rnd.pick(t.pageMapEntries)),
        () => t.fileOffset(rnd.pick(t.central)),
        () => t.fileOffset(rnd.pick(t.caches)),
        () => t.fileOffset(t.g.pageHeap),
        () => {
          const n = rnd.pick(t.notes)
          return n.offset + rnd.int(n.size)
        },
        () => t.phoff + 56 * rnd.int(t.phnum),
        () => rnd.pick(t.heapSegments).fileOffset + rnd.int(rnd.pick(t.heapSegments).presentSize),
        () => rnd.int(t.size),
        () => 64,
      ])()
      return {size: (boundary ?? rnd.int(t.size)) + rnd.pick([0, 1, 7, 8])}
    },
    'elf-headers': () => {
      const n = 1 + rnd.int(4)
      for (let k = 0; k < n; k++) {
        const where = rnd.pick([() => rnd.int(64), () => t.phoff + rnd.int(t.phnum * 56), () => {
          const no = rnd.pick(t.notes)
          return no.offset + rnd.int(no.size)
        }])()
        patches.push({offset: where, bytes: Buffer.of(rnd.pick([0, 0xff, rnd.int(256)]))})
      }
    },
  }
  const names = Object.keys(kinds)
  const kind = rnd.pick(names)
  // Two damages at once in one mutant of four: real crash damage rarely comes alone.
  const extra = rnd.chance(0.25) ? rnd.pick(names.filter(n => n !== 'truncate' && n !== 'bit-flips')) : null
  const r = kinds[kind]!()
  if (extra) kinds[extra]!()
  return {label: extra ? `${kind}+${extra}` : kind, patches, size: typeof r === 'object' ? r.size : undefined, xor: r === 'xor'}
}

function overlayOf(corePath: string, m: ReturnType<typeof mutate>): FileOverlay {
  if (!m.xor) return {patches: m.patches, size: m.size}
  const fd = fs.openSync(corePath, 'r')
  const patches = m.patches.map(p => {
    const b = Buffer.alloc(1)
    fs.readSync(fd, b, 0, 1, p.offset)
    return {offset: p.offset, bytes: Buffer.of(b[0]! ^ p.bytes[0]!)}
  })
  fs.closeSync(fd)
  return {patches, size: m.size}
}

/** What the parent sends: one batch of mutants of one fixture. */
export interface FuzzBatch { corePath: string; flags: ProgramOptions; seed: number; ids: number[] }
/** What this child reports to the parent. */
export type FuzzReport =
  | {type: 'ready'}
  | {type: 'start'; id: number; label: string}
  | {type: 'done'; id: number; label: string; outcome: string; detail: string; ms: number; rss: number}
  | {type: 'batch-done'}
const send = (m: FuzzReport) => process.send!(m)

process.on('message', (batch: FuzzBatch) => {
  const {corePath, flags, seed, ids} = batch
  const clean = analyse(corePath, flags, undefined)
  const t = targets(corePath, flags)
  for (const id of ids) {
    const rnd = generator(seed, id)
    const m = mutate(t, rnd)
    send({type: 'start', id, label: m.label})
    const started = performance.now()
    let outcome: string
    let detail = ''
    try {
      const r = analyse(corePath, flags, overlayOf(corePath, m))
      const changed = r.answer !== clean.answer
      const warned = r.warnings > 0 || r.graphWarnings > clean.graphWarnings
      if (!changed) outcome = warned || !r.crossOk ? 'same-warned' : 'same'
      else if (warned || !r.crossOk) outcome = 'changed-warned'
      else outcome = 'silent'
      if (outcome === 'silent') detail = `${clean.answer} -> ${r.answer}`
    } catch (e) {
      if (e instanceof TomaError) {
        outcome = 'refused'
        detail = e.message.split('\n')[0]
      } else {
        outcome = 'internal'
        detail = e instanceof Error ? (e.stack ?? e.message) : String(e)
      }
    }
    send({type: 'done', id, label: m.label, outcome, detail, ms: performance.now() - started, rss: process.memoryUsage().rss})
  }
  send({type: 'batch-done'})
})
send({type: 'ready'})
