import path from 'node:path'
import type {ModuleFlagValues} from '../cli/open-program.js'
import {openProgram} from '../cli/open-program.js'
import {writeIndex} from '../index/index-file.js'
import {defaultIndexPath, rememberLast, type CoreIdentity} from '../index/index-location.js'
import type {Program} from '../program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../tcmalloc/heap.js'
import {heapSummary, type HeapSummary} from './heap-summary.js'
import {scanHeapGraph, type ScannedGraph} from '../graph/scan.js'
import {nameObjects, type ObjectTypes} from '../graph/object-types.js'
import {TypeNamer} from '../graph/types.js'
import {reachableFromRoots} from '../graph/reachability.js'
import {parseRootKinds} from '../graph/root-kinds.js'
import {markAllocatorInternal} from '../graph/allocator-internal.js'
import {rootRegions, type RootRegion} from '../graph/root-regions.js'

export interface AnalyzeOptions extends ModuleFlagValues {
  'tcmalloc-version'?: string
  index?: string
  /** Root kinds to scan, as `--roots` lists them (default: all). */
  roots?: string
}

/** What later commands need from the index besides its arrays. */
export interface IndexMeta {
  identity: CoreIdentity
  options: AnalyzeOptions
  summary: HeapSummary
  sizeClassSizes: number[]
  threadCaches: Array<{address: number; tid: number | null}>
  /** Type id k (k ≥ 1) in object.type names typeNames[k − 1]. */
  typeNames: string[]
  /** The root regions scanned, sorted by start: a root's label is the region holding its address. */
  rootRegions: RootRegion[]
}

export interface Analysis {
  program: Program
  heap: TcmallocHeap
  graph: ScannedGraph
  types: ObjectTypes
  summary: HeapSummary
  indexPath: string
}

type Progress = (phase: string, done: number, total: number) => void

/** Opens the core, models the heap, and writes the index; returns everything for reporting. */
export function analyzeCore(corePath: string, options: AnalyzeOptions, progress?: Progress): Analysis {
  const rootKinds = options.roots === undefined ? undefined : parseRootKinds(options.roots)
  const program = openProgram(corePath, options)
  const heap = analyzeHeap(program, {tcmallocVersion: options['tcmalloc-version'], progress})
  const graph = scanHeapGraph(program, heap, {progress, rootKinds})
  const types = nameObjects(graph.firstWords, new TypeNamer(program), progress)
  progress?.('reachability', 0, 1)
  const reachable = reachableFromRoots(graph.objectCount, graph.outStart, graph.outTo, graph.rootTo)
  markAllocatorInternal(heap, graph.firstWords, types, reachable, graph.outStart, graph.outTo)
  progress?.('summary', 0, 1)
  const summary = heapSummary(program, heap, graph, types, reachable)
  const indexPath = options.index ?? defaultIndexPath(corePath)
  const meta: IndexMeta = {
    identity: {
      path: path.resolve(corePath),
      size: program.core.size,
      mtimeMs: program.core.mtimeMs,
      buildIds: program.core.modules.map(m => ({path: m.path, buildId: m.buildId})),
    },
    // Paths made absolute: later commands may run from another folder.
    options: {
      ...options,
      index: undefined,
      exe: options.exe && path.resolve(options.exe),
      tcmalloc: options.tcmalloc && path.resolve(options.tcmalloc),
      sysroot: options.sysroot && path.resolve(options.sysroot),
    },
    summary,
    sizeClassSizes: Array.from(heap.globals.sizes.size),
    threadCaches: heap.threadCaches.map(c => ({address: c.address, tid: c.tid})),
    typeNames: types.names,
    rootRegions: rootRegions(graph),
  }
  progress?.('writing index', 0, 1)
  const s = heap.spans
  writeIndex(indexPath, meta, {
    'span.record': s.record,
    'span.start': s.start,
    'span.pages': s.pages,
    'span.sizeClass': s.sizeClass,
    'span.location': s.location,
    'span.refcount': s.refcount,
    'span.sampled': s.sampled,
    'span.objectSize': s.objectSize,
    'span.firstObject': s.firstObject,
    'span.objectCount': s.objectCount,
    'object.state': heap.state,
    'threadCache.objects': heap.threadCacheObjects,
    'threadCache.owner': heap.threadCacheOwner,
    'object.type': types.typeOf,
    'object.reachable': reachable,
    'edge.outStart': graph.outStart,
    'edge.to': graph.outTo.subarray(0, graph.edgeCount),
    'edge.offset': graph.outOffset.subarray(0, graph.edgeCount),
    'edge.toOffset': graph.outToOffset.subarray(0, graph.edgeCount),
    'edge.inStart': graph.inStart,
    'edge.inEdge': graph.inEdge.subarray(0, graph.edgeCount),
    'edge.inFrom': graph.inFrom,
    'root.kind': graph.rootKind,
    'root.thread': graph.rootThread,
    'root.address': graph.rootAddress,
    'root.to': graph.rootTo,
    'root.toOffset': graph.rootToOffset,
  })
  rememberLast(corePath, indexPath)
  return {program, heap, graph, types, summary, indexPath}
}
