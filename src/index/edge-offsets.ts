import {hex, TomaError} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import {EdgeWords} from '../graph/edge-words.js'
import {lastAtOrBelow} from '../util/search.js'
import {DamagedIndexError, type IndexFile} from './index-file.js'

/** Where the objects are (the index's span table). */
export interface ObjectLookup {
  objectBounds(index: number, start: Float64Array, end: Float64Array, at: number): void
}

/** One object's edges [first, first + to.length): targets and where each pointer lies. */
export interface ObjectEdges {
  first: number
  to: Uint32Array
  /** Byte offset of each pointer in the source object. */
  offset: Float64Array
  /** Each pointer's value minus its target's start. */
  toOffset: Float64Array
}

/**
 * Edge offsets for queries, found again in the core (edge-words.ts): the index keeps each edge's
 * target and the checkpoints' offsets, the core the words. A walk starts at the last checkpoint
 * at or before the edge asked for within its object (else at the object's start), so it reads
 * less than CHECKPOINT_BYTES of the object and its targets for fewer than CHECKPOINT_EDGES edges.
 */
export class EdgeOffsets {
  private readonly words: EdgeWords
  private checkpoints?: {edge: Uint32Array; offset: Float64Array}
  /** The last walk's targets (starts and ends) and what it found: reused, grown as needed. */
  private targetStart = new Float64Array(1024)
  private targetEnd = new Float64Array(1024)
  private found = {offset: new Float64Array(1024), toOffset: new Float64Array(1024)}
  private readonly sourceStart = new Float64Array(1)
  private readonly sourceEnd = new Float64Array(1)

  constructor(
    private readonly file: IndexFile,
    private readonly objects: ObjectLookup,
    memory: AddressSpace,
    private readonly corePath: string,
    windowBytes?: number,
  ) {
    this.words = new EdgeWords(memory, windowBytes)
  }

  /** Edges [e0, e1) of object `from`, whose edges start at `first` (edge.outStart's, checked by the caller). */
  edges(from: number, first: number, e0: number, e1: number): ObjectEdges {
    if (e0 >= e1) return {first: e0, to: new Uint32Array(0), offset: new Float64Array(0), toOffset: new Float64Array(0)}
    this.objects.objectBounds(from, this.sourceStart, this.sourceEnd, 0)
    const sourceStart = this.sourceStart[0]!
    const size = this.sourceEnd[0]! - sourceStart
    let start = first
    let startOffset = 0
    // The checkpoint must be one of this object's edges (the next object's first edge can be one).
    const c = this.checkpointAtOrBefore(e0)
    if (c >= 0 && this.checkpoints!.edge[c]! >= first) {
      start = this.checkpoints!.edge[c]!
      startOffset = this.checkpoints!.offset[c]!
      if (!(Number.isInteger(startOffset) && startOffset >= 0 && startOffset % 8 === 0 && startOffset < size)) {
        throw new DamagedIndexError(this.file.path, `checkpoint ${c} has a bad offset`)
      }
    }
    const to = this.file.slice('edge.to', start, e1 - start)
    const {offset, toOffset} = this.walk(sourceStart, size, start - first, startOffset, to, 0, to.length)
    if (start !== first && offset[0] !== startOffset) throw new DamagedIndexError(this.file.path, `checkpoint edge ${start} is not at its offset`)
    const skip = e0 - start
    return {first: e0, to: to.subarray(skip), offset: offset.slice(skip, to.length), toOffset: toOffset.slice(skip, to.length)}
  }

  /**
   * The offsets of all of object `from`'s edges, whose targets are to[at, at + count): [0, count)
   * of arrays reused by the next call (the export walks every object with one EdgeOffsets).
   */
  allEdges(from: number, to: Uint32Array, at: number, count: number): {offset: Float64Array; toOffset: Float64Array} {
    this.objects.objectBounds(from, this.sourceStart, this.sourceEnd, 0)
    return this.walk(this.sourceStart[0]!, this.sourceEnd[0]! - this.sourceStart[0]!, 0, 0, to, at, count)
  }

  /** Walks the object at sourceStart from byte startOffset, where its edge `nth` is, for the edges to to[at, at + n) (into the scratch arrays). */
  private walk(sourceStart: number, size: number, nth: number, startOffset: number, to: Uint32Array, at: number, n: number): {offset: Float64Array; toOffset: Float64Array} {
    if (this.found.offset.length < n) this.grow(n)
    const {targetStart, targetEnd} = this
    for (let i = 0; i < n; i++) this.objects.objectBounds(to[at + i]!, targetStart, targetEnd, i)
    const {offset, toOffset} = this.found
    const found = this.words.find(sourceStart, size, startOffset, targetStart, targetEnd, n, offset, toOffset)
    if (found < n) {
      throw new TomaError(`${this.corePath}: the object at ${hex(sourceStart)} does not hold its edge ${nth + found}'s pointer in this core: the index was not made from it; run toma analyze on it again`)
    }
    return this.found
  }

  private grow(n: number): void {
    const size = Math.max(n, 2 * this.found.offset.length)
    this.targetStart = new Float64Array(size)
    this.targetEnd = new Float64Array(size)
    this.found = {offset: new Float64Array(size), toOffset: new Float64Array(size)}
  }

  /** The last checkpoint at or before edge e, or −1. */
  private checkpointAtOrBefore(e: number): number {
    this.checkpoints ??= {edge: this.file.array('edge.checkpoint'), offset: this.file.array('edge.checkpointOffset')}
    return lastAtOrBelow(this.checkpoints.edge, e)
  }
}
