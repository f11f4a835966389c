/** An append-only Float64Array that doubles as it grows: millions of values without a JS object each. */
export class GrowableF64 {
  private data: Float64Array
  length = 0

  constructor(initial = 1024) {
    this.data = new Float64Array(initial)
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = v
  }

  /** The values, trimmed to length (a copy only when there is slack). */
  toArray(): Float64Array {
    return this.length === this.data.length ? this.data : this.data.slice(0, this.length)
  }
}
