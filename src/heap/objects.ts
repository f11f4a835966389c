import {lastAtOrBelow} from '../util/search.js'
import {spanIndexAt, type SpanObjectArrays} from './slot-table.js'

/** One object slot: its id (slot index), first byte, size and span. */
export interface ObjectRef {
  index: number
  start: number
  size: number
  span: number
}

/** Any state: a cursor or visit over every slot. */
export const ANY_STATE = -1

/**
 * A reusable position over object slots in address order (span by span, slot by slot), with no
 * JS object per slot: `while (c.next()) use(c.index, c.start, c.size, c.span)`. Works in loops that
 * await (streamed output), which a callback cannot.
 */
export class ObjectCursor {
  index = -1
  start = 0
  size = 0
  span = -1
  private k = 0
  private n = 0

  constructor(
    private readonly spans: SpanObjectArrays,
    private readonly state: Uint8Array | null,
    private readonly want: number,
  ) {}

  next(): boolean {
    const s = this.spans
    for (;;) {
      if (this.k < this.n) {
        const id = s.firstObject[this.span]! + this.k
        const start = s.start[this.span]! + this.k * this.size
        this.k++
        if (this.state !== null && this.state[id] !== this.want) continue
        this.index = id
        this.start = start
        return true
      }
      if (++this.span >= s.start.length) return false
      this.size = s.objectSize[this.span]!
      this.n = s.objectCount[this.span]!
      this.k = 0
    }
  }
}

/**
 * The heap's objects as viewcore's ForEachObject / FindObject give them: every slot (or those of
 * one state) in address order, and the slot holding an address. The in-memory model and the index
 * both answer through it; only where the state bytes come from differs.
 */
export class HeapObjects {
  private stateBytes?: Uint8Array
  /** The span sizeOf found last. */
  private lastSpan = 0

  constructor(
    readonly spans: SpanObjectArrays,
    readonly pageSize: number,
    /** One state byte per slot (states.ts); called once, when first needed. */
    private readonly loadState: () => Uint8Array,
  ) {}

  get spanCount(): number {
    return this.spans.start.length
  }

  get state(): Uint8Array {
    return (this.stateBytes ??= this.loadState())
  }

  /** A cursor over every slot whose state is `state` (ANY_STATE: every slot). */
  cursor(state: number = ANY_STATE): ObjectCursor {
    return new ObjectCursor(this.spans, state === ANY_STATE ? null : this.state, state)
  }

  /** Calls visit(id, start, size, span) for every slot whose state is `state` and size is in [minSize, maxSize], in address order. */
  forEachObject(visit: (id: number, start: number, size: number, span: number) => void, state: number = ANY_STATE, minSize = 0, maxSize = Infinity): void {
    // The cursor's walk as plain nested loops: this is the hot path (every object of the heap,
    // several times per analysis), and V8 keeps these loops' numbers in registers.
    const {start, objectSize, firstObject, objectCount} = this.spans
    const states = state === ANY_STATE ? null : this.state
    for (let span = 0; span < start.length; span++) {
      const size = objectSize[span]!
      // A span's slots are all of one size: a search for one size skips the others' spans whole.
      if (size < minSize || size > maxSize) continue
      const first = firstObject[span]!
      const base = start[span]!
      const count = objectCount[span]!
      for (let k = 0; k < count; k++) {
        if (states === null || states[first + k] === state) visit(first + k, base + k * size, size, span)
      }
    }
  }

  /** Index of the span whose pages hold addr, or −1. */
  spanAt(addr: number): number {
    return spanIndexAt(this.spans, this.pageSize, addr)
  }

  /** The object slot holding addr (any state), or undefined outside every span or in a span's tail waste. */
  findObject(addr: number): ObjectRef | undefined {
    const span = this.spanAt(addr)
    if (span < 0) return undefined
    const s = this.spans
    const size = s.objectSize[span]!
    const k = Math.floor((addr - s.start[span]!) / size)
    if (k >= s.objectCount[span]!) return undefined
    return {index: s.firstObject[span]! + k, start: s.start[span]! + k * size, size, span}
  }

  /**
   * The size of slot `index` (its span's object size), without an ObjectRef: the span found last
   * is tried first, as a walk over the dominator tree meets neighbouring slots together.
   */
  sizeOf(index: number): number {
    const s = this.spans
    let span = this.lastSpan
    if (!(index >= s.firstObject[span]! && index < s.firstObject[span]! + s.objectCount[span]!)) span = this.lastSpan = lastAtOrBelow(s.firstObject, index)
    return s.objectSize[span]!
  }

  /** The slot of an id. */
  object(index: number): ObjectRef {
    const s = this.spans
    const span = lastAtOrBelow(s.firstObject, index)
    const size = s.objectSize[span]!
    return {index, start: s.start[span]! + (index - s.firstObject[span]!) * size, size, span}
  }
}

/** The model's objects (a heap model or anything with its slot table and states), through the one iteration and lookup API the index answers with too. */
export function heapObjects(heap: {spans: SpanObjectArrays; pageSize: number; state: Uint8Array}): HeapObjects {
  return new HeapObjects(heap.spans, heap.pageSize, () => heap.state)
}

/** The object slot containing addr: its span, index and start, or undefined outside every span. */
export function objectAt(heap: {spans: SpanObjectArrays; pageSize: number; state: Uint8Array}, addr: number): ObjectRef | undefined {
  return heapObjects(heap).findObject(addr)
}
