import {hex} from '../errors.js'
import {REGISTER_NAMES} from '../core/threads.js'
import type {Program} from '../program/program.js'
import type {HeapModel} from '../heap/heap-model.js'
import {heapObjects} from '../heap/objects.js'
import {Warnings} from '../heap/warnings.js'
import {ROOT_KIND_NAMES, ROOT_REGISTER, RootBuilder, type HeapGraph} from './csr.js'
import {buildLiveLookup, LiveResolver, type LiveLookup} from './live-lookup.js'
import {CHUNK, CORE_PAGE, type ScanTables} from './object-scan.js'
import {CHECKPOINTS, type CheckpointRule} from './edge-words.js'
import {buildReverse} from './reverse-job.js'
import {rootRanges, type RootRange, type RootSet} from './roots.js'
import {scanForward} from './scan-job.js'
import {collectGarbage} from '../util/collect-garbage.js'
import type {FileArray} from '../util/file-array.js'
import type {ProgressUpdate} from '../util/terminal-progress.js'

export {edgeSource, inEdges, outEdges, rootsOf, ROOT_KIND_NAMES, type HeapGraph, type IndexRange} from './csr.js'

/** The graph arrays only the index needs (queries read them there; no later phase does). */
export type IndexOnlyEdgeArray = 'edge.inEdge'

export interface ScanOptions {
  progress?: ProgressUpdate
  /** Root kinds to scan (ROOT_* of csr.ts); all when absent. */
  rootKinds?: ReadonlySet<number>
  /** Threads for the object scan and the reverse edges (this one and workers); 1 when absent. */
  threads?: number
  /**
   * Takes each index-only array as soon as it exists (the reverse edge ids when the reverse pass
   * is done), as consecutive pieces, so the caller can write it out before the next pass
   * allocates; the returned graph then has an empty array in its place. Without it the graph
   * keeps them.
   */
  handOff?: (name: IndexOnlyEdgeArray, pieces: Uint32Array[]) => void
  /**
   * Called with the forward edges as soon as the object scan has them (`outTo` cut to the edges):
   * the caller can start writing them out while the roots, the first words and the reverse pass
   * are dealt with. Where it returns the place outStart is written to, the reverse pass reads it
   * there and the graph keeps none (an empty array; `outStartFile` says where it is): the caller
   * reads it back once the reverse graph's memory is gone (4 bytes an object slot less at the
   * reverse pass's peak).
   */
  forwardBuilt?: (outStart: Uint32Array, outTo: Uint32Array) => FileArray | undefined
  /**
   * Called with the reverse graph as soon as it exists, before the reverse edge ids are handed
   * off: the caller can start writing it out while they are.
   */
  reverseBuilt?: (reverse: {inStart: Uint32Array; inFrom: Uint32Array}) => void
  /** Which edges keep their offset (edge-words.ts); CHECKPOINTS when absent. */
  checkpoints?: CheckpointRule
  /**
   * Takes the objects' first words once the scan and the roots are done, before the reverse pass
   * allocates (types are named from them, 8 bytes an object slot): the returned graph then has an
   * empty array in their place. Without it the graph keeps them.
   */
  takeFirstWords?: (firstWords: Float64Array) => void
}

const TWO32 = 0x1_0000_0000
const NONE: Uint32Array = new Uint32Array(0)
const NO_WORDS: Float64Array = new Float64Array(0)

/**
 * The graph as the phases after the scan use it: without the reverse edge ids (the index has
 * those), the objects' first words (only type naming reads them, and they are
 * dropped after it) nor the reverse graph (only the index and the dominator pass read it, and
 * each drops it as soon as it can).
 */
export type AnalysedGraph = Omit<ScannedGraph, 'inEdge' | 'firstWords' | 'inStart' | 'inFrom' | 'spare'>

/** The graph without its edges: what the summary and the root regions read once the edges are dropped. */
export type GraphFacts = Omit<AnalysedGraph, 'outStart' | 'outTo' | 'outStartFile'>

/** The graph with the warnings met while building it (unreadable ranges, stacks not found). */
export interface ScannedGraph extends HeapGraph {
  warnings: Warnings
  /** The first 8 bytes of every scanned object, NaN where not scanned (for naming types); empty where ScanOptions.takeFirstWords took them. */
  firstWords: Float64Array
  /** Every root region found, scanned or not (kinds left out by the caller are not). */
  roots: RootSet & {kinds: ReadonlySet<number>}
  /** Threads the object scan ran on. */
  scanThreads: number
  /** Threads the reverse edges were built on. */
  reverseThreads: number
  /**
   * Memory no one reads any more, for a later phase to write over instead of fresh memory: the
   * reverse edge ids' once handed off (4 bytes an edge), else empty.
   */
  spare: Uint32Array
  /** Where outStart is, when ScanOptions.forwardBuilt took it out of memory (outStart is then empty). */
  outStartFile?: FileArray
}

/**
 * Reads every live object once, in address order, and records each aligned word that points into
 * a live object (interior pointers included) as an edge; then scans registers, stacks and module
 * data for roots the same way. Free objects are neither scanned nor targets.
 */
export function scanHeapGraph(program: Program, heap: HeapModel, options: ScanOptions = {}): ScannedGraph {
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
  const {threads: scanThreads, ...edges} = forwardEdges(program, tables, warnings, options)
  const handOff = options.handOff
  const outStartFile = options.forwardBuilt?.(edges.outStart, edges.outTo.subarray(0, edges.edgeCount))
  if (outStartFile) edges.outStart = NONE
  // The roots before the reverse pass, so that the first words can go first: then only the
  // shortest paths run on this thread beside the dominator pass that follows the reverse pass.
  options.progress?.('roots', 0, 1)
  const rootKinds = options.rootKinds ?? new Set(ROOT_KIND_NAMES.keys())
  const rootSet = rootRanges(program, heap, warnings)
  const roots = scanRoots(program, lookup, warnings, rootSet.ranges, rootKinds)
  options.progress?.('roots', 1, 1)
  if (options.takeFirstWords) handFirstWords(edges, options.takeFirstWords)
  collectGarbage() // the scan's edge blocks and the first words, before the reverse pass allocates
  options.progress?.('reverse edges', 0, 1)
  const reverse = buildReverse(heap.spans.totalObjects, outStartFile ?? edges.outStart, edges.outTo, edges.edgeCount, options.threads ?? 1)
  options.reverseBuilt?.(reverse)
  let inEdge: Uint32Array = reverse.inEdge
  let spare = NONE
  if (handOff) {
    handOff('edge.inEdge', [inEdge])
    spare = inEdge
    inEdge = NONE
  }
  return {
    objectCount: heap.spans.totalObjects,
    ...edges,
    inStart: reverse.inStart,
    inEdge,
    inFrom: reverse.inFrom,
    ...roots.finish(),
    offsetOverflows: roots.overflows,
    warnings,
    roots: {...rootSet, kinds: rootKinds},
    scanThreads,
    reverseThreads: reverse.threads,
    spare,
    outStartFile,
  }
}

/** The free objects whose links the heap model found damaged: who still points at them is wanted whole. */
function damagedSlots(heap: HeapModel): Uint32Array {
  const objects = heapObjects(heap)
  const slots = heap.damage.findings.map(f => (f.entry ? (objects.findObject(f.entry)?.index ?? -1) : -1)).filter(s => s >= 0)
  return Uint32Array.from(new Set(slots)).sort()
}

/**
 * The object scan, in a frame of its own: the scan's result, with the forward edges, is held by
 * no register of the caller's, whose frame lives through the reverse pass (outStart may leave
 * memory before it).
 */
function forwardEdges(program: Program, tables: ScanTables, warnings: Warnings, options: ScanOptions) {
  return scanForward(program.core.memory, program.core.memorySource(), tables, warnings, options.threads ?? 1, options.progress)
}

/** In a frame of its own, which no register of the caller's outlives: the words are then garbage. */
function handFirstWords(scanned: {firstWords: Float64Array}, take: (firstWords: Float64Array) => void): void {
  take(scanned.firstWords)
  scanned.firstWords = NO_WORDS
}

function scanRoots(program: Program, t: LiveLookup, warnings: Warnings, ranges: RootRange[], kinds: ReadonlySet<number>): RootBuilder {
  const roots = new RootBuilder()
  const resolver = new LiveResolver(t)
  const memory = program.core.memory
  for (const thread of kinds.has(ROOT_REGISTER) ? program.core.threads : []) {
    for (let r = 0; r < REGISTER_NAMES.length; r++) {
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
