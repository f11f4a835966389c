import {hex} from '../errors.js'
import type {Program} from '../program/program.js'
import type {HeapModel} from '../heap/heap-model.js'
import {heapObjects} from '../heap/objects.js'
import {Warnings} from '../heap/warnings.js'
import {ROOT_KIND_NAMES, ROOT_REGISTER, RootBuilder, type HeapGraph} from './csr.js'
import {buildLiveLookup, LiveResolver, type LiveLookup} from './live-lookup.js'
import {CHUNK} from '../core/read-chunk.js'
import {CORE_PAGE, type ScanTables} from './object-scan.js'
import {CHECKPOINTS, type CheckpointRule} from './edge-words.js'
import {buildReverse, type ReverseEdges} from './reverse-job.js'
import {rootRanges, type RootRange, type RootSet} from './roots.js'
import {scanForward, type ForwardScan} from './scan-job.js'
import type {ScanRoom} from './edge-spill.js'
import type {FileArray} from '../util/file-array.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'


export interface ScanOptions {
  progress?: ProgressUpdate
  /** Root kinds to scan (ROOT_* of csr.ts); all when absent. */
  rootKinds?: ReadonlySet<number>
  /** Threads for the object scan and the reverse edges (this one and workers); 1 when absent. */
  threads?: number
  /** Which edges keep their offset (edge-words.ts); CHECKPOINTS when absent. */
  checkpoints?: CheckpointRule
  /** false: the caller has the objects' first words (first-words.ts), the scan keeps none. */
  firstWords?: boolean
  /** Called while the edges are joined into one array (edge-blocks.ts: concatBlocks), with the bytes left to copy. */
  releaseBlocks?: (bytesLeft: number) => void
  /** Under a memory limit: what the scan may hold, so that finished ranges' targets wait in a scratch file where it runs short (edge-spill.ts). */
  room?: ScanRoom
}

/** The graph with the warnings met while building it (unreadable ranges, stacks not found). */
export interface ScannedGraph extends HeapGraph {
  warnings: Warnings
  /** The first 8 bytes of every scanned object, NaN where not scanned (for naming types). */
  firstWords: Float64Array
  /** Every root region found, scanned or not (kinds left out by the caller are not). */
  roots: RootSet & {kinds: ReadonlySet<number>}
  /** Threads the object scan ran on. */
  scanThreads: number
  /** Threads the reverse edges were built on. */
  reverseThreads: number
}

/** The graph without its edges: what the summary and the root regions read once the edges are dropped. */
export type GraphFacts = Omit<ScannedGraph, 'outStart' | 'outTo' | 'inStart' | 'inEdge' | 'inFrom' | 'firstWords' | 'checkpointEdge' | 'checkpointOffset'>

/** The object scan's results: the forward edges, the objects' first words, and what the roots are scanned with. */
export interface ObjectScan extends Omit<ForwardScan, 'threads'> {
  lookup: LiveLookup
  warnings: Warnings
  scanThreads: number
}

/** The root scan's results. */
export type RootScan = ReturnType<RootBuilder['finish']> & {offsetOverflows: number; roots: RootSet & {kinds: ReadonlySet<number>}}

/**
 * Reads every live object once, in address order, and records each aligned word that points into
 * a live object (interior pointers included) as an edge; then scans registers, stacks and module
 * data for roots the same way, and builds the reverse edges. Free objects are neither scanned nor
 * targets. (The analysis runs the three as phases of their own: src/pipeline/graph-phases.ts.)
 */
export function scanHeapGraph(program: Program, heap: HeapModel, options: ScanOptions = {}): ScannedGraph {
  const {lookup, scanThreads, ...edges} = scanObjects(program, heap, options)
  const roots = scanGraphRoots(program, heap, lookup, edges.warnings, options)
  const outTo = edges.outTo
  // Only a caller with an index to write (the analysis's scan phase) asks for the targets there.
  if (!(outTo instanceof Uint32Array)) throw new Error('scanHeapGraph: the edge targets went to an index')
  const reverse = reverseEdges(heap.spans.totalObjects, edges.outStart, outTo, edges.edgeCount, options)
  return {objectCount: heap.spans.totalObjects, ...edges, outTo, inStart: reverse.inStart, inEdge: reverse.inEdge, inFrom: reverse.inFrom, ...roots, scanThreads, reverseThreads: reverse.threads}
}

/** The object scan (scan-job.ts) on `threads` threads: the forward edges and the objects' first words. */
export function scanObjects(program: Program, heap: HeapModel, options: ScanOptions): ObjectScan {
  const warnings = new Warnings()
  options.progress?.('scan objects', 0, heap.spans.count)
  const lookup = buildLiveLookup(heap)
  const {state: _state, ...pointerLookup} = lookup
  const tables: ScanTables = {
    ...pointerLookup,
    spanCount: heap.spans.count,
    spanPages: heap.spans.pages,
    spanObjectCount: heap.spans.objectCount,
    pageSize: heap.pageSize,
    totalObjects: heap.spans.totalObjects,
    checkpoints: options.checkpoints ?? CHECKPOINTS,
    watchSlots: damagedSlots(heap),
  }
  const {threads: scanThreads, ...edges} = scanForward(program.core.memory, program.core.memorySource(), tables, warnings, options.threads ?? 1, options.progress, options.firstWords !== false, options.releaseBlocks, options.room)
  return {...edges, lookup, warnings, scanThreads}
}

/**
 * Where roots live (roots.ts), found ahead of the root scan, with the warnings finding them gave:
 * the naming tiers read the same ranges while the objects are scanned.
 */
export interface FoundRoots {
  set: RootSet
  warnings: Warnings
}

export function findRoots(program: Program, heap: HeapModel): FoundRoots {
  const warnings = new Warnings()
  return {set: rootRanges(program, heap, warnings), warnings}
}

/**
 * The roots: registers, stacks and module data scanned for pointers into live objects. The
 * warnings of finding the ranges follow the objects' (`warnings`), as if found here.
 */
export function scanGraphRoots(program: Program, heap: HeapModel, lookup: LiveLookup, warnings: Warnings, options: ScanOptions, found: FoundRoots = findRoots(program, heap)): RootScan {
  options.progress?.('roots', 0, 1)
  const rootKinds = options.rootKinds ?? new Set(ROOT_KIND_NAMES.keys())
  const rootSet = found.set
  warnings.merge(found.warnings)
  const roots = scanRoots(program, lookup, warnings, rootSet.ranges, rootKinds)
  options.progress?.('roots', 1, 1)
  return {...roots.finish(), offsetOverflows: roots.overflows, roots: {...rootSet, kinds: rootKinds}}
}

/** The reverse edges (reverse-job.ts) on `threads` threads; outStart may be in the index being written. */
export function reverseEdges(objectCount: number, outStart: Uint32Array | FileArray, outTo: Uint32Array, edgeCount: number, options: ScanOptions): ReverseEdges {
  options.progress?.('reverse edges', 0, 1)
  return buildReverse(objectCount, outStart, outTo, edgeCount, options.threads ?? 1)
}

const TWO32 = 0x1_0000_0000

/** The free objects whose links the heap model found damaged: who still points at them is wanted whole. */
function damagedSlots(heap: HeapModel): Uint32Array {
  const objects = heapObjects(heap)
  const slots = heap.damage.findings.map(f => (f.entry ? (objects.findObject(f.entry)?.index ?? -1) : -1)).filter(s => s >= 0)
  return Uint32Array.from(new Set(slots)).sort()
}

function scanRoots(program: Program, t: LiveLookup, warnings: Warnings, ranges: RootRange[], kinds: ReadonlySet<number>): RootBuilder {
  const roots = new RootBuilder()
  const resolver = new LiveResolver(t)
  const memory = program.core.memory
  for (const thread of kinds.has(ROOT_REGISTER) ? program.core.threads : []) {
    for (let r = 0; r < thread.registers.length; r++) {
      const value = Number(thread.registers[r]!)
      const slot = resolver.slotOf(value)
      if (slot >= 0) roots.add(ROOT_REGISTER, thread.tid, r, slot, value - resolver.liveStart)
    }
  }
  const buf = Buffer.allocUnsafeSlow(CHUNK)
  const words = new Uint32Array(buf.buffer, buf.byteOffset, CHUNK >>> 2)
  const {lo, hi, loHi, hiHi} = t
  const scanRange = (range: RootRange) => {
    let unreadableBytes = 0
    for (let pos = range.start; pos < range.end; pos += CHUNK) {
      const n = Math.min(CHUNK, range.end - pos)
      if (!memory.readInto(pos, n, buf)) {
        unreadableBytes += readPageByPage(pos, n)
        continue
      }
      scanBuffer(pos, n / 4)
    }
    if (unreadableBytes > 0) {
      warnings.add('roots', `${range.label}: ${unreadableBytes} bytes at ${hex(range.start)}..${hex(range.end)} are not in the core; not scanned`, range.start)
    }

    function scanBuffer(bufAddr: number, wordCount: number) {
      for (let w = 0; w < wordCount; w += 2) {
        const vh = words[w + 1]!
        if (vh < loHi || vh > hiHi) continue
        const v = vh * TWO32 + words[w]!
        if (v < lo || v >= hi) continue
        const slot = resolver.slotOf(v)
        if (slot >= 0) roots.add(range.kind, range.thread, bufAddr + w * 4, slot, v - resolver.liveStart)
      }
    }

    /** A chunk with holes: scan the 4 KiB pages the core has; return bytes it has not. */
    function readPageByPage(pos: number, n: number): number {
      let missing = 0
      const end = pos + n
      for (let p = pos; p < end; ) {
        const q = Math.min(end, (Math.floor(p / CORE_PAGE) + 1) * CORE_PAGE)
        if (memory.readInto(p, q - p, buf)) scanBuffer(p, (q - p) / 4)
        else missing += q - p
        p = q
      }
      return missing
    }
  }
  for (const range of ranges) if (kinds.has(range.kind)) scanRange(range)
  return roots
}
