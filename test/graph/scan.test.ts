import {FreePointerLog} from '../../src/graph/free-pointers.js'
import fs from 'node:fs'
import {beforeAll, describe, expect, it} from 'vitest'
import {analyzeTcmalloc, type TcmallocHeapModel} from '../helpers/tcmalloc-heap.js'
import {heapObjects, objectAt} from '../../src/heap/objects.js'
import {LIVE} from '../../src/heap/states.js'
import {edgeSource, inEdges, outEdges, rootsOf} from '../../src/graph/csr.js'
import {scanHeapGraph, type ScannedGraph} from '../../src/graph/scan.js'
import {ROOT_GLOBAL, ROOT_KIND_NAMES, ROOT_REGISTER, ROOT_STACK, ROOT_TLS} from '../../src/graph/csr.js'
import {fillReverseShare, finishReverse, reverseBlockCount} from '../../src/graph/reverse-csr.js'
import {writableSegments} from '../../src/graph/roots.js'
import type {Program} from '../../src/program/program.js'
import {addr, fixtureIndex, openFixture, type Truth} from '../helpers/fixture-core.js'
import {buildLiveLookup} from '../../src/graph/live-lookup.js'
import {scanObjectWords, scanSpanRange, type ScanTables} from '../../src/graph/object-scan.js'
import {scanBuffer} from '../../src/core/read-chunk.js'
import {EdgeBlocks} from '../../src/graph/edge-blocks.js'
import {CHECKPOINTS, EdgeWords} from '../../src/graph/edge-words.js'
import {edgeOffsetsOf} from '../helpers/edge-offsets.js'
import {failing} from '../helpers/failing.js'
import {naiveEdges} from '../helpers/naive-edges.js'
import {testTemp} from '../helpers/test-temp.js'
import {readFileArray, type FileArray} from '../../src/util/file-array.js'
import {IndexWriter} from '../../src/index/index-file.js'
import {MAX_PASSES, reverseInPasses} from '../../src/graph/reverse-passes.js'

const fixtures = fixtureIndex()


/** The executable's symbol at a (data or .bss) address. */
function exeSymbol(program: Program, address: number): string | undefined {
  const exe = program.executable!
  return exe.file?.symbolAt(address - exe.module.loadBias)?.symbol.name
}

describe.skipIf(fixtures.length === 0)('scanHeapGraph on fixture cores', () => {
  for (const f of fixtures) {
    describe(f.id, () => {
      let program: Program
      let truth: Truth
      let heap: TcmallocHeapModel
      let g: ScannedGraph
      /** The edges' offsets, found again in the core (edge-words.ts). */
      let off: {offset: Float64Array; toOffset: Float64Array}
      /** The word-by-word scan's edges, made once for the two tests that compare with them. */
      let naive: string[] | undefined
      const naiveOnce = () => (naive ??= naiveEdges(program, heap))
      const slotOf = (address: string) => {
        const o = objectAt(heap, addr(address))
        expect(o, `${address} is an object`).toBeDefined()
        expect(o!.start, `${address} starts an object`).toBe(addr(address))
        expect(heap.state[o!.index], `${address} is live`).toBe(LIVE)
        return o!.index
      }

      beforeAll(async () => {
        ;({program, truth} = await openFixture(f.id))
        heap = analyzeTcmalloc(program)
        const phases = new Set<string>()
        g = scanHeapGraph(program, heap, {progress: phase => phases.add(phase)})
        expect([...phases]).toContain('scan objects')
        off = edgeOffsetsOf(program.core.memory, heap, g)
      })

      it('scans every live object and reads them all', () => {
        let live = 0
        for (let i = 0; i < heap.state.length; i++) if (heap.state[i] === LIVE) live++
        expect(g.objectCount).toBe(heap.spans.totalObjects)
        expect(g.scannedObjects).toBe(live)
        expect(g.unreadableObjects).toBe(0)
        expect(g.offsetOverflows).toBe(0)
        expect(g.warnings.list).toEqual([])
      })

      it('records every pointer field of every manifest object as an edge with its offsets', () => {
        let interior = 0
        let checked = 0
        for (const o of truth.objects) {
          const from = slotOf(o.address)
          const {start, end} = outEdges(g, from)
          const got = new Set<string>()
          for (let e = start; e < end; e++) got.add(`${off.offset[e]}->${g.outTo[e]}+${off.toOffset[e]}`)
          for (const p of o.pointers) {
            const to = slotOf(p.to)
            expect(got, `${o.name}+${p.offset} -> ${p.to}+${p.toOffset}`).toContain(`${p.offset}->${to}+${p.toOffset}`)
            if (p.toOffset !== 0) interior++
            checked++
          }
        }
        expect(checked).toBeGreaterThan(10)
        expect(interior, 'the manifest has interior pointers').toBeGreaterThan(0)
      })

      it('keeps interior pointers: toOffset is the distance from the target start', () => {
        expect(failing(g.edgeCount, e => off.toOffset[e]! < objectAtSlot(heap, g.outTo[e]!).size), 'edges whose toOffset is past their target').toEqual([])
        expect(off.toOffset.some(t => t !== 0)).toBe(true)
      })

      it('edges equal a word-by-word scan with objectAt', () => {
        const fast: string[] = []
        for (let o = 0; o < g.objectCount; o++) {
          for (let e = g.outStart[o]!; e < g.outStart[o + 1]!; e++) fast.push(`${o}+${off.offset[e]}->${g.outTo[e]}+${off.toOffset[e]}`)
        }
        expect(fast).toEqual(naiveOnce())
      })

      it('keeps the offsets of the checkpoints its rule names, and the walk from each finds the same offsets', () => {
        const rule = {edges: 3, bytes: 64}
        const narrow = scanHeapGraph(program, heap, {checkpoints: rule})
        expect(narrow.outTo).toEqual(g.outTo)
        expect(narrow.outStart).toEqual(g.outStart)
        const expected: number[] = []
        for (let o = 0; o < g.objectCount; o++) {
          let markedAt = 0
          for (let e = g.outStart[o]!; e < g.outStart[o + 1]!; e++) {
            const k = e - g.outStart[o]!
            if ((k > 0 && k % rule.edges === 0) || off.offset[e]! - markedAt >= rule.bytes) {
              expected.push(e)
              markedAt = off.offset[e]!
            }
          }
        }
        expect(expected.length, 'objects with checkpoints under the narrow rule').toBeGreaterThan(10)
        expect(Array.from(narrow.checkpointEdge)).toEqual(expected)
        expect(Array.from(narrow.checkpointOffset)).toEqual(expected.map(e => off.offset[e]))
        // From each checkpoint, the walk finds the object's next edges where the walk from its start did.
        const words = new EdgeWords(program.core.memory)
        const objects = heapObjects(heap)
        for (const c of expected) {
          const o = edgeSource(g, c)
          const end = Math.min(g.outStart[o + 1]!, c + rule.edges)
          const targets = Array.from(g.outTo.subarray(c, end), t => objects.object(t))
          const offset = new Float64Array(end - c)
          const toOffset = new Float64Array(end - c)
          const source = objects.object(o)
          const found = words.find(source.start, source.size, off.offset[c]!, targets.map(t => t.start), targets.map(t => t.start + t.size), end - c, offset, toOffset)
          expect(found).toBe(end - c)
          expect(Array.from(offset)).toEqual(Array.from(off.offset.subarray(c, end)))
          expect(Array.from(toOffset)).toEqual(Array.from(off.toOffset.subarray(c, end)))
        }
        // The default rule on these small heaps: every 256th edge of an object, none by distance.
        for (let i = 0; i < g.checkpointEdge.length; i++) expect((g.checkpointEdge[i]! - g.outStart[edgeSource(g, g.checkpointEdge[i]!)]!) % CHECKPOINTS.edges).toBe(0)
      })

      it("gives the same edges with each way of finding a pointer's span: by page, by leaf then span, by binary search", () => {
        const lookup = buildLiveLookup(heap)
        expect(lookup.root, 'the fixture heap has a page table').not.toBeNull()
        expect(lookup.pageSpans.length, 'and per-page facts').toBeGreaterThan(0)
        const tables: ScanTables = {...lookup, spanCount: heap.spans.count, spanPages: heap.spans.pages, spanObjectCount: heap.spans.objectCount, pageSize: heap.pageSize, totalObjects: heap.spans.totalObjects, checkpoints: CHECKPOINTS, watchSlots: new Uint32Array(0)}
        const edgesWith = (t: ScanTables) => {
          const outStart = new Uint32Array(t.totalObjects + 1)
          const scan = scanSpanRange(program.core.memory, t, {start: 0, end: t.spanCount, liveBytesBefore: 0}, outStart, new Float64Array(t.totalObjects), scanBuffer())
          const list: string[] = []
          const at = (a: Uint32Array[], e: number) => a[Math.floor(e / a[0]!.length)]![e % a[0]!.length]!
          for (let o = 0; o < t.totalObjects; o++) {
            for (let e = outStart[o]!; e < outStart[o + 1]!; e++) list.push(`${o}->${at(scan.edges.to, e)}`)
          }
          return list
        }
        // The targets, object by object in word order (the offsets are the walk's, tested above).
        const naive = naiveOnce().map(e => e.replace(/\+\d+->(\d+)\+\d+$/, '->$1'))
        expect(naive.length).toBeGreaterThan(0)
        expect(edgesWith(tables)).toEqual(naive)
        expect(edgesWith({...tables, pageSpans: new Uint32Array(0)})).toEqual(naive)
        expect(edgesWith({...tables, root: null})).toEqual(naive)
      })

      it('records the same edges, checkpoints and pointers into free slots whatever number of words it looks up together', () => {
        const lookup = buildLiveLookup(heap)
        // A narrow rule, so that objects have checkpoints by count and by distance, some in a later batch than their object's first edge.
        const tables: ScanTables = {...lookup, spanCount: heap.spans.count, spanPages: heap.spans.pages, spanObjectCount: heap.spans.objectCount, pageSize: heap.pageSize, totalObjects: heap.spans.totalObjects, checkpoints: {edges: 3, bytes: 48}, watchSlots: new Uint32Array(0)}
        const scanWith = (batchWords?: number) => {
          const outStart = new Uint32Array(tables.totalObjects + 1)
          const firstWords = new Float64Array(tables.totalObjects)
          const scan = scanSpanRange(program.core.memory, tables, {start: 0, end: tables.spanCount, liveBytesBefore: 0}, outStart, firstWords, scanBuffer(), batchWords)
          const to: number[] = scan.edges.to.flatMap(block => Array.from(block))
          const free = scan.freePointers
          return {outStart: Array.from(outStart), firstWords: Array.from(firstWords), to, checkpointEdge: Array.from(scan.edges.checkpointEdge), checkpointOffset: Array.from(scan.edges.checkpointOffset), free: [free.count, Array.from(free.word), Array.from(free.value), Array.from(free.target)], objects: scan.scannedObjects}
        }
        const whole = scanWith()
        expect(whole.to.length).toBeGreaterThan(0)
        expect(whole.checkpointEdge.length, 'checkpoints').toBeGreaterThan(0)
        // Some objects have more edges than the smaller batches hold.
        let most = 0
        for (let o = 0; o < tables.totalObjects; o++) most = Math.max(most, whole.outStart[o + 1]! - whole.outStart[o]!)
        expect(most).toBeGreaterThan(5)
        for (const words of [1, 5]) expect(scanWith(words), `${words} words a batch`).toEqual(whole)
      })

      it("takes no pointer into a span's tail waste for its next span's first object, with each way of finding the span", () => {
        const lookup = buildLiveLookup(heap)
        const s = heap.spans
        // Per span with a tail past its last object, and a live first object in the next span: a
        // word into the tail (no edge) and one to that first object (an edge).
        const words: number[] = []
        const expected: number[] = []
        for (let i = 0; i + 1 < s.count; i++) {
          const tail = s.start[i]! + s.objectCount[i]! * s.objectSize[i]!
          const next = s.firstObject[i + 1]!
          if (tail >= s.start[i]! + s.pages[i]! * heap.pageSize || s.objectCount[i + 1] === 0 || heap.state[next] !== LIVE) continue
          for (const v of [tail, s.start[i + 1]!]) words.push(v % 2 ** 32, Math.floor(v / 2 ** 32))
          expected.push(next)
        }
        expect(expected.length, 'spans with tail waste before a live object').toBeGreaterThan(0)
        const buffer = Uint32Array.from(words)
        for (const t of [lookup, {...lookup, pageSpans: new Uint32Array(0)}, {...lookup, root: null}]) {
          const sink = new EdgeBlocks(CHECKPOINTS)
          const free = new FreePointerLog()
          scanObjectWords(buffer, 0, buffer.length, 0, 0, t, sink, free)
          expect(Array.from(sink.finish().to[0]!)).toEqual(expected)
          // A word into a span's tail waste points into no slot: no edge, and no pointer to a free slot.
          expect(free.count).toBe(0)
        }
      })

      it('no edge or root involves an object that is not live', () => {
        expect(failing(g.objectCount, o => heap.state[o] === LIVE || g.outStart[o + 1]! === g.outStart[o]!), 'objects not live with edges').toEqual([])
        expect(failing(g.edgeCount, e => heap.state[g.outTo[e]!] === LIVE), 'edges to an object not live').toEqual([])
        expect(failing(g.rootCount, r => heap.state[g.rootTo[r]!] === LIVE), 'roots of an object not live').toEqual([])
      })

      it('reverse CSR holds every edge exactly once, under its target', () => {
        expect(g.inStart[g.objectCount]).toBe(g.edgeCount)
        const seen = new Uint8Array(g.edgeCount)
        // Each target's list: its edges point at it, each is its source's, the sources ascending.
        const listIsRight = (o: number) => {
          const {start, end} = inEdges(g, o)
          let prevSource = -1
          for (let i = start; i < end; i++) {
            const e = g.inEdge[i]!
            seen[e]!++
            const src = edgeSource(g, e)
            if (g.outTo[e] !== o || !(e >= g.outStart[src]! && e < g.outStart[src + 1]!) || src < prevSource) return false
            prevSource = src
          }
          return true
        }
        expect(failing(g.objectCount, listIsRight, g.objectCount), 'targets whose list is wrong').toEqual([])
        expect(seen.every(n => n === 1)).toBe(true)
      })

      // The test runner runs sources, so the reverse pass is on one thread here, with the fixture's
      // few objects in one block. Small blocks dealt to three threads, run one after the other,
      // check that the shares fit together (each block's lists after those of every block before
      // it, whichever thread has them), and each way of filling a block: sorted after the
      // distribution, in place (a block over the edge limit), and both mixed.
      it('reverse CSR is the same, byte for byte, with small blocks of targets dealt to three threads, sorted or filled in place', () => {
        const threads = 3
        const blockShift = 5
        const blocks = reverseBlockCount(g.objectCount, blockShift)
        expect(blocks, 'every thread has blocks').toBeGreaterThanOrEqual(3 * threads)
        const blockThread = Uint8Array.from({length: blocks}, (_, b) => b % threads)
        const totals = new Float64Array(blocks)
        for (let e = 0; e < g.edgeCount; e++) totals[g.outTo[e]! >>> blockShift]!++
        const sortedTotals = [...totals].sort((a, b) => a - b)
        const median = sortedTotals[blocks >>> 1]!
        expect(median, 'blocks below and above the middle limit').toBeLessThan(sortedTotals[blocks - 1]!)
        const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
        // The analysis has the threads read outStart from the index (scan.ts: forwardBuilt).
        const path = `${testTemp('reverse-')}/index`
        fs.writeFileSync(path, Buffer.concat([Buffer.alloc(24, 0xee), bytes(g.outStart), Buffer.alloc(8, 0xee)]))
        const outStartFile: FileArray = {path, byteOffset: 24, length: g.outStart.length, written: Int32Array.of(1)}
        for (const maxBlockEdges of [Infinity, 0, median]) {
          for (const outStart of [g.outStart, outStartFile]) {
            const what = `limit ${maxBlockEdges}, outStart ${outStart === outStartFile ? 'in a file' : 'in memory'}`
            const into = {inStart: new Uint32Array(g.objectCount + 1), inEdge: new Uint32Array(g.edgeCount), inFrom: new Uint32Array(g.edgeCount)}
            // From the file in reads of 37 entries, so that objects' ranges straddle reads.
            for (let thread = 0; thread < threads; thread++) fillReverseShare(g.objectCount, outStart, g.outTo, {blockThread, thread, blockShift}, into, maxBlockEdges, 37)
            finishReverse(into.inStart, g.objectCount)
            expect(bytes(into.inStart).equals(bytes(g.inStart)), `inStart, ${what}`).toBe(true)
            expect(bytes(into.inEdge).equals(bytes(g.inEdge)), `inEdge, ${what}`).toBe(true)
            expect(bytes(into.inFrom).equals(bytes(g.inFrom)), `inFrom, ${what}`).toBe(true)
          }
        }
      })

      // Under a memory limit (analyze --memory-limit) the reverse CSR is built in passes over
      // consecutive blocks of targets, each written to its place in the index being written: the
      // arrays read back from the file must be the one-pass build's, with a pass a block and with
      // passes of several blocks.
      it('reverse CSR built in passes into the index reads back the same, byte for byte', () => {
        const blockShift = 5
        const blocks = reverseBlockCount(g.objectCount, blockShift)
        expect(blocks).toBeGreaterThanOrEqual(8)
        const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
        const blockEdges = new Float64Array(blocks)
        for (let e = 0; e < g.edgeCount; e++) blockEdges[g.outTo[e]! >>> blockShift]!++
        // Room for about half the edges a pass, beside a thread's read chunk and sort scratch.
        const half = (4 << 20) + 4 * 2 ** blockShift + 10 * Math.max(...blockEdges) + 8 * (g.edgeCount / 2) + 4 * (g.objectCount / 2)
        for (const [room, what] of [[0, 'no room'], [half, 'about half the edges a pass']] as const) {
          const work = testTemp('reverse-passes-')
          const writer = new IndexWriter(`${work}/index`)
          try {
            // Something before them, so that their places are not at the file's start.
            writer.add('edge.to', g.outTo)
            const into = {inFrom: writer.reserve('edge.inFrom', g.edgeCount), inStart: writer.reserve('edge.inStart', g.objectCount + 1), inEdge: writer.reserve('edge.inEdge', g.edgeCount)}
            let collected = 0
            const {passes} = reverseInPasses(g.objectCount, g.outStart, g.outTo, g.edgeCount, 1, into, () => room, () => collected++, blockShift)
            // No room: passes of a sixteenth of the edges at least (each pass walks them all).
            if (room === 0) expect(passes >= Math.min(blocks, MAX_PASSES) / 2 && passes <= MAX_PASSES, `${what}: ${passes} passes of ${blocks} blocks`).toBe(true)
            else expect(passes > 1 && passes < blocks, `${what}: ${passes} passes of ${blocks} blocks`).toBe(true)
            expect(collected, 'memory let go after each pass').toBe(passes)
            const back = (a: {file: FileArray}) => readFileArray(a.file, new Uint32Array(a.file.length))
            expect(bytes(back(into.inStart)).equals(bytes(g.inStart)), `inStart, ${what}`).toBe(true)
            expect(bytes(back(into.inEdge)).equals(bytes(g.inEdge)), `inEdge, ${what}`).toBe(true)
            expect(bytes(back(into.inFrom)).equals(bytes(g.inFrom)), `inFrom, ${what}`).toBe(true)
          } finally {
            writer.abandon()
          }
        }
      })

      it('objects held by a stack have a stack root from that thread and no incoming edge', () => {
        const held = truth.objects.filter(o => o.heldBy?.kind === 'stack')
        expect(held.length).toBeGreaterThan(0)
        for (const o of held) {
          const slot = slotOf(o.address)
          const tid = (o.heldBy as {tid: number}).tid
          const {start, end} = rootsOf(g, slot)
          const kinds: string[] = []
          for (let r = start; r < end; r++) {
            expect(g.rootTo[r]).toBe(slot)
            kinds.push(`${ROOT_KIND_NAMES[g.rootKind[r]!]}:${g.rootThread[r]}`)
          }
          expect(kinds, o.name).toContain(`stack:${tid}`)
          const inn = inEdges(g, slot)
          expect(inn.end - inn.start, `${o.name} has no incoming edge`).toBe(0)
        }
      })

      it('objects held by a global have a global root in that symbol (or, stripped, in the executable data)', () => {
        const held = truth.objects.filter(o => o.heldBy?.kind === 'global')
        expect(held.length).toBeGreaterThan(0)
        const exe = program.executable!
        const exeData = writableSegments(program, exe.module.mappings)
        for (const o of held) {
          const slot = slotOf(o.address)
          const symbol = (o.heldBy as {symbol: string}).symbol
          const symbolKnown = exe.file?.symbolByName(symbol) !== undefined
          const {start, end} = rootsOf(g, slot)
          const globals: string[] = []
          for (let r = start; r < end; r++) {
            if (g.rootKind[r] !== ROOT_GLOBAL) continue
            const a = g.rootAddress[r]!
            if (symbolKnown) globals.push(exeSymbol(program, a) ?? '?')
            else if (exeData.some(s => a >= s.start && a < s.end)) globals.push(symbol)
          }
          expect(globals, o.name).toContain(symbol)
        }
      })

      it('roots are well formed: stack roots inside [rsp-128, stack end), register roots name the register value', () => {
        const threads = new Map(program.core.threads.map(t => [t.tid, t]))
        const counts = ROOT_KIND_NAMES.map(() => 0)
        for (let r = 0; r < g.rootCount; r++) {
          counts[g.rootKind[r]!]!++
          if (r > 0) expect(g.rootTo[r]!).toBeGreaterThanOrEqual(g.rootTo[r - 1]!)
          const target = objectAtSlot(heap, g.rootTo[r]!)
          if (g.rootKind[r] === ROOT_REGISTER) {
            const t = threads.get(g.rootThread[r]!)!
            const value = Number(t.registers[g.rootAddress[r]!]!)
            expect(value - target.start).toBe(g.rootToOffset[r])
            expect(program.core.arch.registerNames[g.rootAddress[r]!]).toBeDefined()
            continue
          }
          const value = program.core.memory.readU64(g.rootAddress[r]!)!
          expect(value - target.start).toBe(g.rootToOffset[r])
          expect(g.rootAddress[r]! % 8).toBe(0)
          if (g.rootKind[r] === ROOT_STACK) {
            const t = threads.get(g.rootThread[r]!)!
            expect(g.rootAddress[r]!).toBeGreaterThanOrEqual(t.sp - program.core.arch.redZone)
            expect(g.rootAddress[r]!).toBeLessThan(program.core.stackSegment(t)!.end)
          } else if (g.rootKind[r] === ROOT_TLS) {
            // The thread's static TLS and TCB, around its fs_base.
            const t = threads.get(g.rootThread[r]!)!
            expect(g.rootAddress[r]!).toBeGreaterThanOrEqual(t.threadPointer! - 65536)
            expect(g.rootAddress[r]!).toBeLessThan(t.threadPointer! + 4096)
          } else {
            expect(g.rootThread[r]).toBe(-1)
          }
        }
        expect(counts[ROOT_STACK]).toBeGreaterThan(0)
        expect(counts[ROOT_GLOBAL]).toBeGreaterThan(0)
      })

      it("never takes TCMalloc's own state as roots", () => {
        const {globals} = heap
        // The page heap, central cache and size map, wherever TCMalloc lives (library or executable);
        // the rest of its module's data is scanned like any module's.
        const excluded: Array<[number, number]> = [
          [globals.pageHeap, globals.pageHeap + globals.layout.pageHeap.size],
          [globals.centralCache, globals.centralCache + globals.sizes.count * globals.layout.central.stride],
          [globals.sizeMap, globals.sizeMap + globals.layout.sizeMap.size],
        ]
        expect(excluded.length).toBeGreaterThan(0)
        for (let r = 0; r < g.rootCount; r++) {
          if (g.rootKind[r] === ROOT_REGISTER) continue
          const a = g.rootAddress[r]!
          for (const [lo, hi] of excluded) expect(a >= lo && a < hi, `root at 0x${a.toString(16)}`).toBe(false)
        }
      })
    })
  }
})

describe.skipIf(!fixtures.some(f => f.id === 'v2.10-shared'))('scanHeapGraph on a core with a hole', () => {
  it('skips and counts a live object whose bytes are not in the core, and scans everything else', async () => {
    const {program, truth} = await openFixture('v2.10-shared')
    const heap = analyzeTcmalloc(program)
    const victim = truth.objects.find(o => o.pointers.length > 0)!
    const hole = objectAt(heap, addr(victim.address))!
    // The same process image, except that the victim's bytes read as "not in the core".
    const memory = program.core.memory
    const overlaps = (a: number, n: number) => a < hole.start + hole.size && a + n > hole.start
    const holed = Object.create(memory, {
      readInto: {value: (a: number, n: number, into: Buffer, at?: number) => !overlaps(a, n) && memory.readInto(a, n, into, at)},
      isReadable: {value: (a: number, n?: number) => !overlaps(a, n ?? 1) && memory.isReadable(a, n)},
    })
    const core = Object.create(program.core, {memory: {value: holed}})
    const holedProgram = Object.create(program, {core: {value: core}}) as Program
    const g = scanHeapGraph(holedProgram, heap)
    const full = scanHeapGraph(program, heap)
    expect(g.unreadableObjects).toBe(1)
    expect(g.scannedObjects).toBe(full.scannedObjects - 1)
    expect(g.warnings.counts.get('scan')).toBe(1)
    const {start, end} = outEdges(g, hole.index)
    expect(end - start).toBe(0)
    // Every other object keeps exactly its edges.
    const lost = full.outStart[hole.index + 1]! - full.outStart[hole.index]!
    expect(lost).toBeGreaterThanOrEqual(victim.pointers.length)
    expect(g.edgeCount).toBe(full.edgeCount - lost)
    const keepsItsEdges = (o: number) => {
      if (o === hole.index) return true
      const a = outEdges(g, o)
      const b = outEdges(full, o)
      if (a.end - a.start !== b.end - b.start) return false
      for (let i = 0; i < a.end - a.start; i++) if (g.outTo[a.start + i] !== full.outTo[b.start + i]) return false
      return true
    }
    expect(failing(g.objectCount, keepsItsEdges), 'objects whose edges differ from the whole core\'s').toEqual([])
  })
})

function objectAtSlot(heap: TcmallocHeapModel, slot: number): {start: number; size: number} {
  const s = heap.spans
  let lo = 0
  let hi = s.count - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (s.firstObject[mid]! <= slot) lo = mid
    else hi = mid - 1
  }
  return {start: s.start[lo]! + (slot - s.firstObject[lo]!) * s.objectSize[lo]!, size: s.objectSize[lo]!}
}
