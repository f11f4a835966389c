import {lastAtOrBelowBy} from '../util/search.js'
import type {IndexFile} from './index-file.js'
import type {ArrayName} from './schema.js'

/** Values read at once when a lookup touches a column: a few KiB, one ranged read. */
const BLOCK = 1024

/**
 * One array of an index read in blocks as lookups touch it. A query looks at a handful of a big
 * core's million spans: reading and checking the whole table first cost it more than the answer
 * (issue 13: start-up).
 */
export class IndexColumn {
  readonly length: number
  private readonly blocks = new Map<number, ArrayLike<number>>()

  constructor(
    private readonly file: IndexFile,
    private readonly name: ArrayName,
  ) {
    this.length = file.length(name)
  }

  /** The value at i (0 ≤ i < length). */
  get(i: number): number {
    const b = Math.floor(i / BLOCK)
    let block = this.blocks.get(b)
    if (!block) {
      block = this.file.slice(this.name, b * BLOCK, Math.min(BLOCK, this.length - b * BLOCK))
      this.blocks.set(b, block)
    }
    return block[i - b * BLOCK]!
  }

  /** In a column sorted ascending: the last position whose value is ≤ v, or −1. */
  lastAtOrBelow(v: number): number {
    return lastAtOrBelowBy(this.length, i => this.get(i), v)
  }
}
