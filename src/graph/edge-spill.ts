import {ScratchFile} from '../util/scratch-file.js'
import type {FileArray, ReservedArray} from '../util/file-array.js'
import type {EdgeBlockList} from './edge-blocks.js'

/** What the scan may hold, asked of the caller (graph-phases.ts: the memory limit and the store). */
export interface ScanRoom {
  /** Bytes the process may still allocate. */
  room: () => number
  /** A collection: spilled blocks are memory again only after one. */
  collect: () => void
  /** Spill when the room left is below this. */
  margin: number
  /** The file whose folder takes the scratch file (the index being written). */
  beside: string
  /**
   * The targets' place in the index, asked for once outStart is final, where the room left does
   * not hold the join: outStart goes to the index first (so both lie where they would have), and
   * the join writes the targets there instead of into memory (edge-blocks.ts: writeBlocks). The
   * roots' scan then runs without them, and they come back for the reverse edges once outStart
   * is out of memory: the two are never in memory together. Absent: the join is in memory.
   */
  targetsInIndex?: (outStart: Uint32Array, edgeCount: number) => ReservedArray
}

/**
 * Finished ranges' edge targets written out of memory while the scan goes on, where the memory
 * limit does not hold them beside what the scan still has to find: each spilled range's blocks go
 * to a scratch file beside the index (scratch-file.ts), one place a range, and the join
 * (edge-blocks.ts: concatBlocks) reads them back into the one array of targets, block for block
 * what it would have copied. The scan's peak is then the join's (outStart and the targets), not
 * that and the scan's workers, read buffers and garbage besides.
 */
export class EdgeSpill {
  private scratch: ScratchFile | null = null
  /** Ranges spilled. */
  spilled = 0

  constructor(private readonly limit: ScanRoom) {}

  /** Whether the room left, less `bytesToCome`, is short of the margin. */
  short(bytesToCome = 0): boolean {
    return this.limit.room() - bytesToCome < this.limit.margin
  }

  /**
   * Where the room left, less `bytesToCome`, is short: every finished range still in memory goes
   * to the scratch file, then a collection frees it.
   */
  relieve(ranges: ReadonlyArray<{edges: EdgeBlockList} | undefined>, bytesToCome = 0): void {
    if (!this.short(bytesToCome)) return
    let any = false
    for (const range of ranges) {
      if (!range || range.edges.parked || range.edges.count === 0) continue
      range.edges.parked = this.park(range.edges.to, range.edges.count)
      range.edges.to = []
      this.spilled++
      any = true
    }
    if (any) this.limit.collect()
  }

  private park(blocks: Uint32Array[], count: number): FileArray {
    this.scratch ??= new ScratchFile(this.limit.beside)
    const place = this.scratch.reserve(count)
    let at = 0
    for (const block of blocks) {
      this.scratch.writeAt(place, at, block)
      at += block.length
    }
    return place
  }

  /** Removes the scratch file (once the join has read it back, or the scan failed; safe to call again). */
  remove(): void {
    this.scratch?.remove()
    this.scratch = null
  }
}
