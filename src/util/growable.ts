type NumberArray = Float64Array | Uint32Array | Int32Array

/**
 * An append-only typed array that doubles as it grows: millions of values without a JS object
 * each. One class for every element type the analysis keeps.
 */
class Growable<T extends NumberArray> {
  data: T
  length = 0

  constructor(private readonly make: (n: number) => T, initial = 1024) {
    this.data = make(initial)
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = v
  }

  /** The values, trimmed to length (a copy only when there is slack). */
  toArray(): T {
    return this.length === this.data.length ? this.data : (this.data.slice(0, this.length) as T)
  }
}

export class GrowableF64 extends Growable<Float64Array> {
  constructor(initial = 1024) {
    super(n => new Float64Array(n), initial)
  }
}

export class GrowableU32 extends Growable<Uint32Array> {
  constructor(initial = 1024) {
    super(n => new Uint32Array(n), initial)
  }
}

export class GrowableI32 extends Growable<Int32Array> {
  constructor(initial = 1024) {
    super(n => new Int32Array(n), initial)
  }
}
