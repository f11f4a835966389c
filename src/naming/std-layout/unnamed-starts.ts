import type {NamingContext} from '../recogniser.js'

/** Most heap pages the table covers (16 MiB of bytes); past it, every word may start a block. */
const MAX_PAGES = 1 << 24

/**
 * Per page of the heap's range, whether a live block with no name yet starts in it. Every layout
 * test starts from a word that starts such a block (Probe.block), so a word into any other page
 * starts none, and this one read of a byte tells it where the tests' owner-side checks read up to
 * six words around it first. Names are only added while the tier runs, so the table, made before,
 * holds every page it must. On workloaddemo's timing core the DWARF tier names all but 1.6 % of
 * the live blocks, and most owner words point at named ones.
 */
export class UnnamedStarts {
  private readonly pages: Uint8Array | null
  private readonly lo: number
  private readonly pageSize: number

  constructor(ctx: NamingContext) {
    const {spans, pageSize} = ctx.objects
    this.pageSize = pageSize
    let lo = Infinity
    let hi = 0
    for (let i = 0; i < spans.start.length; i++) {
      lo = Math.min(lo, spans.start[i]!)
      hi = Math.max(hi, spans.start[i]! + spans.pages[i]! * pageSize)
    }
    this.lo = lo
    const count = lo < hi ? Math.ceil((hi - lo) / pageSize) : 0
    this.pages = count <= MAX_PAGES ? new Uint8Array(count) : null
    const pages = this.pages
    if (!pages) return
    const typeOf = ctx.names.typeOf
    ctx.objects.forEachObject((slot, start) => {
      if (typeOf[slot] === 0) pages[Math.floor((start - lo) / pageSize)] = 1
    }, ctx.live)
  }

  /** Whether `word` may start a live block with no name (false: it surely does not). */
  may(word: number): boolean {
    if (this.pages === null) return true
    return this.pages[Math.floor((word - this.lo) / this.pageSize)] === 1
  }
}
