import {checkIdWidth} from './csr.js'
import {newUint32} from '../util/shared-arrays.js'
import {GrowableF64, GrowableU32} from '../util/growable.js'
import type {CheckpointRule} from './edge-words.js'
import {readFileArray, Uint32Reader, type FileArray, type ReservedArray} from '../util/file-array.js'

/**
 * Edges per block: 256 KiB. Small enough that a range's last, partly filled block wastes little;
 * large enough that starting a block is rare in the scan loop.
 */
export const EDGE_BLOCK = 1 << 16

/** One range's forward edges: full blocks of EDGE_BLOCK targets and a last one holding the rest. */
export interface EdgeBlockList {
  count: number
  /** Empty once the blocks are parked. */
  to: Uint32Array[]
  /** Where the range's targets wait out of memory, in order, when the scan spilled them (edge-spill.ts). */
  parked?: FileArray
  /** The range's checkpoints (edge-words.ts): edge ids counted from the range's first edge, ascending. */
  checkpointEdge: Uint32Array
  /** Each checkpoint's pointer offset in its source object. */
  checkpointOffset: Float64Array
}

/**
 * Forward edges being collected in fixed-size blocks rather than arrays that double: nothing is
 * ever copied while scanning, no spare half-array is ever resident, and the blocks are copied
 * once into one exact array when the scan is over, each block freed as it goes. The scan calls
 * `beginObject()` before each object's edges, then `add` for each.
 */
export class EdgeBlocks {
  to = new Uint32Array(EDGE_BLOCK)
  at = 0
  /** Edges in the full blocks. */
  done = 0
  /** The current object's first edge, and its last checkpoint's offset (0 before the first). */
  objectFirst = 0
  markedAt = 0
  private readonly full: Uint32Array[] = []
  private readonly marks = new GrowableU32(64)
  private readonly markOffsets = new GrowableF64(64)

  constructor(readonly rule: CheckpointRule) {}

  get count(): number {
    return this.done + this.at
  }

  next(): void {
    checkIdWidth(this.count + EDGE_BLOCK, 'edges')
    this.full.push(this.to)
    this.to = new Uint32Array(EDGE_BLOCK)
    this.done += EDGE_BLOCK
    this.at = 0
  }

  beginObject(): void {
    this.objectFirst = this.count
    this.markedAt = 0
  }

  /**
   * An edge of the current object to `target`, its pointer at `offset` in the object; a checkpoint
   * (edge-words.ts) where it is the object's edge e − objectFirst > 0 a multiple of rule.edges, or
   * offset − markedAt ≥ rule.bytes.
   */
  add(target: number, offset: number): void {
    let e = this.at
    if (e === this.to.length) {
      this.next()
      e = 0
    }
    this.to[e] = target
    const n = this.done + e
    const nth = n - this.objectFirst
    if ((nth > 0 && nth % this.rule.edges === 0) || offset - this.markedAt >= this.rule.bytes) this.checkpoint(n, offset)
    this.at = e + 1
  }

  /** Keeps edge `e`'s offset (e counted from the range's first). */
  checkpoint(e: number, offset: number): void {
    this.marks.push(e)
    this.markOffsets.push(offset)
    this.markedAt = offset
  }

  /** The blocks, the last one copied to what it holds (so that a scan cut in many ranges wastes nothing). */
  finish(): EdgeBlockList {
    return {
      count: this.count,
      to: [...this.full, this.to.slice(0, this.at)],
      checkpointEdge: this.marks.toArray(),
      checkpointOffset: this.markOffsets.toArray(),
    }
  }
}

/**
 * Copies lists of blocks, in order, into one exact array (shared when asked: a worker reads it),
 * emptying each list as it goes so that a copied block can be freed before the next is copied; a
 * list parked in a file (edge-spill.ts) is read straight into its place.
 * A dropped block's memory goes only at a garbage collection, which copying alone does not bring
 * about: `release(bytesLeft)`, where given, is called after every RELEASE_BLOCKS blocks with what
 * is left to copy, to collect where the memory limit asks (else the copy peaks at twice the edges).
 */
export function concatBlocks(lists: Array<Uint32Array[] | FileArray>, total: number, shared: boolean, release?: (bytesLeft: number) => void): Uint32Array {
  const out = newUint32(total, shared)
  let at = 0
  let copied = 0
  for (const blocks of lists) {
    if (!Array.isArray(blocks)) {
      readFileArray(blocks, out.subarray(at, at + blocks.length))
      at += blocks.length
      continue
    }
    for (let i = 0; i < blocks.length; i++) {
      out.set(blocks[i]!, at)
      at += blocks[i]!.length
      blocks[i] = EMPTY
      if (release && ++copied % RELEASE_BLOCKS === 0) release(4 * (total - at))
    }
    blocks.length = 0
  }
  return out
}

/**
 * concatBlocks into a place in a file instead of memory (the index, under a memory limit:
 * edge-spill.ts, targetsInIndex): each block written where the joined array would hold it, and
 * let go; a list parked in a scratch file read back a chunk at a time. `into` is done once all
 * are written. Returns where the targets lie.
 */
export function writeBlocks(lists: Array<Uint32Array[] | FileArray>, into: ReservedArray): FileArray {
  let at = 0
  for (const blocks of lists) {
    if (!Array.isArray(blocks)) {
      const reader = new Uint32Reader(blocks)
      try {
        for (let i = 0; i < blocks.length; i = reader.end) {
          reader.load(i, blocks.length)
          into.writeAt(at + i, reader.words.subarray(0, reader.end - i))
        }
      } finally {
        reader.close()
      }
      at += blocks.length
      continue
    }
    for (let i = 0; i < blocks.length; i++) {
      into.writeAt(at, blocks[i]!)
      at += blocks[i]!.length
      blocks[i] = EMPTY
    }
    blocks.length = 0
  }
  if (at !== into.file.length) throw new Error(`edge targets: ${at} written where ${into.file.length} were counted`)
  into.done()
  return into.file
}

/** Blocks copied between two calls of concatBlocks's `release`: 16 MiB. */
const RELEASE_BLOCKS = 64

const EMPTY = new Uint32Array(0)
