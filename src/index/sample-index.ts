import {DamagedIndexError} from './index-file.js'
import type {HeapIndex} from './heap-index.js'
import {firstAtOrAbove} from '../util/search.js'

/** One sampled object as the index holds it: its span and slot, the size asked for, its allocation stack. */
export interface StoredSample {
  span: number
  /** The object's slot index. */
  object: number
  address: number
  requestedSize: number
  /** Return addresses, innermost first, as TCMalloc recorded them. */
  stack: number[]
}

/**
 * The sampled objects of an index (sample.* arrays, written from the heap model's SampledObjects):
 * loaded whole on first use (they are few) and checked against the span table before any is used.
 */
export class SampleIndex {
  private span: Uint32Array
  private requestedSize: Float64Array
  private stackStart: Uint32Array
  private pc: Float64Array
  private order: Uint32Array

  /** The arrays are there (the file checked them against the schema); their contents are checked here. */
  constructor(private readonly index: HeapIndex) {
    const f = index.file
    this.span = f.array('sample.span')
    this.requestedSize = f.array('sample.requestedSize')
    this.stackStart = f.array('sample.stackStart')
    this.pc = f.array('sample.pc')
    this.order = f.array('sample.order')
    const problem = this.problem()
    if (problem) throw this.damaged(problem)
  }

  /** TCMalloc's sampling period, null when the analysis could not read it. */
  get period(): number | null {
    return this.index.meta.samplePeriod
  }

  get count(): number {
    return this.span.length
  }

  private problem(): string | null {
    const n = this.span.length
    if (this.requestedSize.length !== n || this.stackStart.length !== n + 1 || this.order.length !== n) return 'sample arrays differ in length'
    const listed = new Uint8Array(n)
    for (const i of this.order) {
      if (i >= n || listed[i]) return 'sample.order is not an order of the samples'
      listed[i] = 1
    }
    if (this.stackStart[0] !== 0 || this.stackStart[n] !== this.pc.length) return 'sample stacks do not cover sample.pc'
    for (let i = 0; i < n; i++) {
      if (this.span[i]! >= this.index.spanCount || (i > 0 && this.span[i]! <= this.span[i - 1]!)) return `sample ${i} has a bad span`
      if (this.stackStart[i + 1]! < this.stackStart[i]!) return `sample ${i} has a bad stack range`
    }
    return null
  }

  private damaged(problem: string): DamagedIndexError {
    return new DamagedIndexError(this.index.file.path, problem)
  }

  sample(i: number): StoredSample {
    const span = this.span[i]!
    const entry = this.index.span(span)
    return {
      span,
      object: entry.firstObject,
      address: entry.start,
      requestedSize: this.requestedSize[i]!,
      stack: Array.from(this.pc.subarray(this.stackStart[i]!, this.stackStart[i + 1]!)),
    }
  }

  /** The sample of the object in a span, or undefined when the span's object was not sampled. */
  ofSpan(span: number): StoredSample | undefined {
    const i = firstAtOrAbove(this.span, span)
    return i < this.span.length && this.span[i] === span ? this.sample(i) : undefined
  }

  /** In address order. */
  *[Symbol.iterator](): IterableIterator<StoredSample> {
    for (let i = 0; i < this.span.length; i++) yield this.sample(i)
  }

  /** In the order MallocExtension::GetHeapSample lists them (oldest first). */
  *inListOrder(): IterableIterator<StoredSample> {
    for (const i of this.order) yield this.sample(i)
  }
}
