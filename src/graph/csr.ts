import type {FreePointers} from './free-pointers.js'
import {TomaError} from '../errors.js'
import {GrowableF64, GrowableI32, GrowableU32} from '../util/growable.js'
import {lastAtOrBelow} from '../util/search.js'
import {sharedUint32} from '../util/shared-arrays.js'

/**
 * The heap's object graph as compressed sparse rows in typed arrays: an object is its slot index
 * in the heap's state array (span table order, i.e. address order); an edge is an index into the
 * forward arrays; a root is an index into the root arrays. Sized for tens of millions of objects
 * and ~10^8 edges without a JS object per anything.
 */

export const ROOT_REGISTER = 0
export const ROOT_STACK = 1
export const ROOT_GLOBAL = 2
export const ROOT_TLS = 3
export const ROOT_MAPPING = 4
export const ROOT_CACHED_STACK = 5
export const ROOT_KIND_NAMES = ['register', 'stack', 'global', 'tls', 'mapping', 'cached-stack'] as const
export type RootKindName = (typeof ROOT_KIND_NAMES)[number]

/** Objects, edges and roots are numbered in Uint32Arrays, and an edge-list end is one past the last id. */
export const MAX_IDS = 0xffff_ffff

/** Stops with a clear error when `count` things would not fit toma's 32-bit ids (rather than wrapping). */
export function checkIdWidth(count: number, what: string): void {
  if (count > MAX_IDS) throw new TomaError(`the heap has more than ${MAX_IDS} ${what} (${count}): beyond toma's 32-bit ${what} ids`)
}

/** Stored in rootToOffset when the true offset does not fit in 32 bits (objects ≥ 4 GiB). */
export const OFFSET_OVERFLOW = 0xffff_ffff

export interface HeapGraph {
  /** Object slots (= heap.spans.totalObjects); live and free, only live ones have edges. */
  objectCount: number
  edgeCount: number
  /** Edges of object o are [outStart[o], outStart[o+1]), sorted by offset. */
  outStart: Uint32Array
  outTo: Uint32Array
  /**
   * The checkpoints: edges whose pointer's byte offset in the source object is kept (ascending),
   * and those offsets. The others' offsets are found again from the source's bytes (edge-words.ts).
   */
  checkpointEdge: Uint32Array
  checkpointOffset: Float64Array
  /** Incoming edges of object o are inEdge[inStart[o] .. inStart[o+1]), edge indexes ascending (= by source). */
  inStart: Uint32Array
  inEdge: Uint32Array
  /** Source object of each incoming edge, parallel to inEdge. */
  inFrom: Uint32Array
  /** Roots, sorted by target (then in discovery order: registers, stacks, globals). */
  rootCount: number
  rootKind: Uint8Array
  /** Thread id for register, stack and TLS roots, −1 for the others. */
  rootThread: Int32Array
  /** Address of the word holding the pointer; for a register root, the REGISTER_NAMES index. */
  rootAddress: Float64Array
  rootTo: Uint32Array
  rootToOffset: Uint32Array
  /** Live objects whose bytes the core does not hold (not dumped, truncated): not scanned. */
  unreadableObjects: number
  scannedObjects: number
  scannedBytes: number
  /** Live objects' words that point into slots that are not live (dangling or stale pointers). */
  freePointers: FreePointers
  /** Roots whose offset did not fit 32 bits and was stored as OFFSET_OVERFLOW. */
  offsetOverflows: number
}

/** A half-open index range [start, end). */
export interface IndexRange {
  start: number
  end: number
}

/** Forward edge indexes of obj. */
export function outEdges(graph: HeapGraph, obj: number): IndexRange {
  return {start: graph.outStart[obj]!, end: graph.outStart[obj + 1]!}
}

/** Positions in graph.inEdge of obj's incoming edges (graph.inEdge[i] is the edge index). */
export function inEdges(graph: HeapGraph, obj: number): IndexRange {
  return {start: graph.inStart[obj]!, end: graph.inStart[obj + 1]!}
}

/** Root indexes pointing into obj (binary search over the target-sorted roots). */
export function rootsOf(graph: HeapGraph, obj: number): IndexRange {
  return {start: lowerBound(graph.rootTo, graph.rootCount, obj), end: lowerBound(graph.rootTo, graph.rootCount, obj + 1)}
}

/** The source object of an edge (binary search over outStart). */
export function edgeSource(graph: HeapGraph, edge: number): number {
  // The last o with outStart[o] <= edge (empty objects share their successor's start).
  return Math.min(lastAtOrBelow(graph.outStart, edge), graph.objectCount - 1)
}

function lowerBound(a: Uint32Array, n: number, v: number): number {
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (a[mid]! < v) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Roots collected during the scan, in discovery order. */
export class RootBuilder {
  private readonly kind = new GrowableU32()
  private readonly thread = new GrowableI32()
  private readonly address = new GrowableF64()
  readonly to = new GrowableU32()
  readonly toOffset = new GrowableU32()
  overflows = 0

  get count(): number {
    return this.to.length
  }

  add(kind: number, thread: number, address: number, to: number, toOffset: number): void {
    checkIdWidth(this.to.length + 1, 'roots')
    this.kind.push(kind)
    this.thread.push(thread)
    this.address.push(address)
    this.to.push(to)
    if (toOffset > OFFSET_OVERFLOW) {
      this.overflows++
      toOffset = OFFSET_OVERFLOW
    }
    this.toOffset.push(toOffset)
  }

  /** The roots as typed arrays sorted by target (stable: discovery order within a target). */
  finish(): Pick<HeapGraph, 'rootCount' | 'rootKind' | 'rootThread' | 'rootAddress' | 'rootTo' | 'rootToOffset'> {
    const n = this.count
    const to = this.to.data
    const kind = this.kind.data
    const address = this.address.toArray()
    const order = new Uint32Array(n)
    for (let i = 0; i < n; i++) order[i] = i
    order.sort((a, b) => to[a]! - to[b]! || a - b)
    const rootKind = new Uint8Array(n)
    const rootThread = new Int32Array(n)
    const rootAddress = new Float64Array(n)
    const rootTo = new Uint32Array(n)
    const rootToOffset = new Uint32Array(n)
    for (let j = 0; j < n; j++) {
      const i = order[j]!
      rootKind[j] = kind[i]!
      rootThread[j] = this.thread.data[i]!
      rootAddress[j] = address[i]!
      rootTo[j] = to[i]!
      rootToOffset[j] = this.toOffset.data[i]!
    }
    return {rootCount: n, rootKind, rootThread, rootAddress, rootTo, rootToOffset}
  }
}
