/**
 * Exact reads from an async stream of chunks: read(n) gives n bytes or throws CutShortError at the
 * end of the stream (a cut file), atEnd() says whether anything is left.
 */
export class ByteReader {
  private chunks: Buffer[] = []
  private buffered = 0
  private done = false
  private readonly source: AsyncIterator<Buffer>

  constructor(source: AsyncIterable<Buffer>) {
    this.source = source[Symbol.asyncIterator]()
  }

  private async fill(n: number): Promise<boolean> {
    while (this.buffered < n && !this.done) {
      const next = await this.source.next()
      if (next.done) this.done = true
      else if (next.value.length > 0) {
        this.chunks.push(next.value)
        this.buffered += next.value.length
      }
    }
    return this.buffered >= n
  }

  async atEnd(): Promise<boolean> {
    return !(await this.fill(1))
  }

  async read(n: number): Promise<Buffer> {
    if (!(await this.fill(n))) throw new CutShortError(`${n - this.buffered} byte(s) missing at the end`)
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)
    const out = all.subarray(0, n)
    const rest = all.subarray(n)
    this.chunks = rest.length > 0 ? [rest] : []
    this.buffered = rest.length
    return out
  }
}

export class CutShortError extends Error {}
