import type {AddressSpace} from '../core/address-space.js'

/**
 * An edge keeps only its target. Where its pointer lies in the source object, and where in the
 * target it points, are found again from the source's bytes when a query asks: the scan records
 * an edge for every aligned word of a live object that points into a live object, in word order,
 * so an object's edge i is the first word after edge i − 1's whose value lies inside edge i's
 * target (the words in between point into no live object, hence not into that one). Storing the
 * two offsets cost 8 bytes an edge in the scan's memory and in the index.
 *
 * So that a query never reads much of a large object, the scan marks checkpoints: an edge whose
 * offset is kept, every CHECKPOINT_EDGES-th edge of an object and any edge CHECKPOINT_BYTES or
 * more past the object's previous checkpoint (or its start). From the checkpoint at or before an
 * edge, its pointer is found within fewer than CHECKPOINT_EDGES edges and CHECKPOINT_BYTES bytes.
 */
export const CHECKPOINT_EDGES = 256
export const CHECKPOINT_BYTES = 1 << 20

/** The checkpoint rule the scan applies (tests narrow it to exercise the checkpoints on small cores). */
export interface CheckpointRule {
  edges: number
  bytes: number
}

export const CHECKPOINTS: CheckpointRule = {edges: CHECKPOINT_EDGES, bytes: CHECKPOINT_BYTES}

/** The granularity at which a core holds or lacks memory (the smallest kernel page, as object-scan.ts's CORE_PAGE), as the scan reads it. */
const PAGE = 4096
const TWO32 = 0x1_0000_0000

/**
 * Finds edges' words in objects' bytes, through a window of the core read at once: queries use a
 * small one (an object or two), the JSON export a large one (it walks every object in address
 * order). Words the core does not hold are skipped page by page, as the scan skipped them.
 */
export class EdgeWords {
  private readonly buf: Buffer
  private readonly words: Uint32Array
  /** The window: [start, end) of the address space, held in buf unless `missing`. */
  private start = 0
  private end = 0
  private missing = false

  constructor(
    private readonly memory: AddressSpace,
    windowBytes = 64 * 1024,
  ) {
    const size = Math.max(PAGE, Math.ceil(windowBytes / PAGE) * PAGE)
    this.buf = Buffer.allocUnsafeSlow(size)
    this.words = new Uint32Array(this.buf.buffer, this.buf.byteOffset, size >>> 2)
  }

  /**
   * In the object of `size` bytes at `objStart`, from byte `from` on (0, or a checkpoint's offset):
   * for i < count, the first word after the previous one found whose value v lies in
   * [targetStart[i], targetEnd[i]); offset[i] is its offset in the object, toOffset[i] is
   * v − targetStart[i]. Returns how many were found: fewer than count when the bytes do not hold
   * those pointers (the core is not the one the edges were found in).
   */
  find(objStart: number, size: number, from: number, targetStart: ArrayLike<number>, targetEnd: ArrayLike<number>, count: number, offset: Float64Array, toOffset: Float64Array): number {
    if (count === 0) return 0
    const end = objStart + Math.floor(size / 8) * 8
    let a = objStart + from
    let i = 0
    let lo = targetStart[0]!
    let hi = targetEnd[0]!
    const words = this.words
    while (a < end) {
      if (a < this.start || a >= this.end) this.load(a, objStart, end)
      if (this.missing) {
        a = this.end
        continue
      }
      const stop = Math.min(end, this.end)
      for (let w = (a - this.start) / 4; a < stop; a += 8, w += 2) {
        const vh = words[w + 1]!
        const v = vh * TWO32 + words[w]!
        // Written so that NaN (an index between two words: an object not 4-byte aligned) is no match.
        if (!(v >= lo && v < hi)) continue
        offset[i] = a - objStart
        toOffset[i] = v - lo
        if (++i === count) return i
        lo = targetStart[i]!
        hi = targetEnd[i]!
      }
    }
    return i
  }

  /**
   * The window at `a` (a word of the object [objStart, end)): a whole window from a's page, else
   * to the object's end, else a's page, else the object's bytes in that page (as the scan reads
   * an object it cannot read whole); none of these: the page is missing, with the pages after it
   * that the core lacks too.
   */
  private load(a: number, objStart: number, end: number): void {
    const page = Math.floor(a / PAGE) * PAGE
    const pageEnd = page + PAGE
    const tries: Array<[number, number]> = [
      [page, page + this.buf.length],
      [page, Math.min(page + this.buf.length, Math.ceil(end / PAGE) * PAGE)],
      [page, pageEnd],
      [Math.max(page, objStart), Math.min(pageEnd, end)],
    ]
    for (const [s, e] of tries) {
      // A window starts on an 8-byte boundary of the object, so its words are the object's.
      if ((s - objStart) % 8 !== 0 || e <= a) continue
      if (this.memory.readInto(s, e - s, this.buf)) {
        this.start = s
        this.end = e
        this.missing = false
        return
      }
    }
    // Missing, and so is every page up to the next byte the core holds: one window for them all
    // (a walk never steps through a large hole, or a damaged index's huge object, page by page).
    const next = Math.floor(Math.min(this.memory.nextReadable(pageEnd), Math.ceil(end / PAGE) * PAGE) / PAGE) * PAGE
    this.start = page
    this.end = Math.max(pageEnd, next)
    this.missing = true
  }
}
