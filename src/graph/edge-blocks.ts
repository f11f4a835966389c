import {checkIdWidth} from './csr.js'
import {newUint32} from '../util/shared-arrays.js'

/**
 * Edges per block: 256 KiB per array. Small enough that a range's last, partly filled block wastes
 * little; large enough that starting a block is rare in the scan loop.
 */
export const EDGE_BLOCK = 1 << 16

/** One range's forward edges: full blocks of EDGE_BLOCK edges and a last one holding the rest. */
export interface EdgeBlockList {
  count: number
  to: Uint32Array[]
  offset: Uint32Array[]
  toOffset: Uint32Array[]
  /** Edges whose offset did not fit 32 bits (stored as OFFSET_OVERFLOW). */
  overflows: number
}

/**
 * Forward edges being collected in fixed-size blocks rather than arrays that double: nothing is
 * ever copied while scanning, no spare half-array is ever resident, and the blocks are copied
 * once into exact arrays (or written to the index) when the scan is over, each block freed as it
 * goes. The scan loop writes `to/offset/toOffset[at]` and calls `next()` when `at` reaches
 * EDGE_BLOCK.
 */
export class EdgeBlocks {
  to = new Uint32Array(EDGE_BLOCK)
  offset = new Uint32Array(EDGE_BLOCK)
  toOffset = new Uint32Array(EDGE_BLOCK)
  at = 0
  overflows = 0
  private readonly full: Array<[Uint32Array, Uint32Array, Uint32Array]> = []

  get count(): number {
    return this.full.length * EDGE_BLOCK + this.at
  }

  next(): void {
    checkIdWidth(this.count + EDGE_BLOCK, 'edges')
    this.full.push([this.to, this.offset, this.toOffset])
    this.to = new Uint32Array(EDGE_BLOCK)
    this.offset = new Uint32Array(EDGE_BLOCK)
    this.toOffset = new Uint32Array(EDGE_BLOCK)
    this.at = 0
  }

  /** The blocks, the last one copied to what it holds (so that a scan cut in many ranges wastes nothing). */
  finish(): EdgeBlockList {
    const last = this.at
    return {
      count: this.count,
      to: [...this.full.map(b => b[0]), this.to.slice(0, last)],
      offset: [...this.full.map(b => b[1]), this.offset.slice(0, last)],
      toOffset: [...this.full.map(b => b[2]), this.toOffset.slice(0, last)],
      overflows: this.overflows,
    }
  }
}

/**
 * Copies lists of blocks, in order, into one exact array (shared when asked: a worker reads it),
 * emptying each list as it goes so that a copied block can be freed before the next is copied.
 */
export function concatBlocks(lists: Uint32Array[][], total: number, shared: boolean): Uint32Array {
  const out = newUint32(total, shared)
  let at = 0
  for (const blocks of lists) {
    for (let i = 0; i < blocks.length; i++) {
      out.set(blocks[i]!, at)
      at += blocks[i]!.length
      blocks[i] = EMPTY
    }
    blocks.length = 0
  }
  return out
}

const EMPTY = new Uint32Array(0)
