/**
 * The analysis's arrays by name, between its phases: the store holds the only references to them,
 * and it alone decides when an array is written to the index, dropped (and the garbage
 * collected), read back, lent to a phase or another thread, or its memory reused. A phase is a
 * plain function from named arrays to named arrays (phase.ts); what happens to each array after
 * it is declared beside it, as store actions, run in order.
 *
 * Why the store holds the references: V8 frees a dropped array only at a garbage collection, and
 * only when nothing reaches it; an interpreted frame's registers keep what they last held (for a
 * collection too) until reused, so an array a long-lived caller's frame once held stayed resident
 * through the next phase's peak. Phases run in a frame of the store's own (run), which returns
 * before the next one: a dropped array is reachable from nowhere, and the collection after the
 * drop frees it. (A worker thread allocating does not make this thread collect, so drops collect
 * themselves: collect-garbage.ts.)
 */
import {collectGarbage} from './collect-garbage.js'
import {inFrameOfItsOwn} from './frame.js'
import {readFileArray, type FileArray, type ReservedArray} from '../util/file-array.js'
import {sharedUint32} from '../util/shared-arrays.js'

/** Where the store writes arrays: the index being written (index-file.ts: IndexWriter). */
export interface IndexSink {
  /** Written on the writer thread where `a` is shared (`written` raised once it is in the file), else at once. */
  addBehind(name: string, a: ArrayBufferView, written?: Int32Array): void
  /** Written at once, as consecutive pieces. */
  addPieces(name: string, pieces: readonly ArrayBufferView[]): void
  /** Where array `name` lies in the file being written (`written` raised once it is all there). */
  fileArray(name: string, written: Int32Array): FileArray
  awaitWritten(written: Int32Array): void
  /** Room for a u32 array filled in pieces, where it would be written now (index-file.ts). */
  reserve(name: string, length: number): ReservedArray
}

/** An array in the store: in memory, or in the index being written (read in order by the phase that takes it). */
export type Stored = ArrayBufferView | FileArray

/** What the store does with arrays once a phase has run (in the order listed). */
export type StoreAction<N extends string = string> =
  /** Written behind (the writer thread where shared), kept in memory. */
  | {write: N}
  /** Written (where not yet) and out of memory: its place holds where it lies in the index. */
  | {spill: N}
  /** Read back into fresh shared memory once the arrays `after` are written and their memory collected. */
  | {readBack: N; after: N[]}
  /** Written at once, then its memory is free for `as` (a later phase writes over it instead of fresh memory). */
  | {writeAndReuse: N; as: N}
  /** Gone (the garbage collected). */
  | {drop: N[]}
  /** Gone, the collection left to the next action that collects. */
  | {forget: N[]}
  /** A collection only: what a phase gave up by itself (a worker's hold, a holder it emptied). */
  | {collect: true}
  /** `then` where the result named `if` (a phase's choice) is true, else `else`. */
  | {if: N; then: readonly StoreAction<N>[]; else?: readonly StoreAction<N>[]}

/** The store over the arrays (and other results) named in `A`. */
export class ArrayStore<A extends object = Record<string, unknown>> {
  private readonly arrays = new Map<string, unknown>()
  /** Per array written behind: its flag (word 0 raised once it is in the file). */
  private readonly flags = new Map<string, Int32Array>()

  /** `sink`: the index arrays are written to; `writing`: told before arrays go to it (progress). */
  constructor(
    private readonly sink: IndexSink | null = null,
    private readonly writing: () => void = () => {},
  ) {}

  /** The index arrays are written to (a worker thread's store has none). */
  private get index(): IndexSink {
    if (!this.sink) throw new Error('array store: no index to write to')
    return this.sink
  }

  /** Holds `values` under their names (arrays and the phase's other results). */
  put(values: Partial<A>): void {
    for (const [name, v] of Object.entries(values)) if (v !== undefined) this.arrays.set(name, v)
  }

  has(name: Name<A>): boolean {
    return this.arrays.has(name)
  }

  /** Lends `name`: the borrower must not hold it past its phase. */
  get<K extends Name<A>>(name: K): A[K] {
    if (!this.arrays.has(name)) throw new Error(`array store: no ${name}`)
    return this.arrays.get(name) as A[K]
  }

  /** Hands `name` over: the store holds it no more (the taker's reference is the last). */
  take<K extends Name<A>>(name: K): A[K] {
    const v = this.get(name)
    this.arrays.delete(name)
    return v
  }

  /**
   * Arrays handed over in a holder (`edges`: the arrays under the keys of `names`) that the
   * borrower empties once it has read them (the dominator pass: dominators.ts, EdgeHolder): made
   * here, in a frame of the store's own, so that nothing but the holder reaches them once taken.
   */
  holder<K extends string>(names: Record<K, Name<A>>): {edges: Record<K, unknown> | null} {
    const edges = {} as Record<K, unknown>
    for (const key of Object.keys(names) as K[]) edges[key] = this.take(names[key])
    return {edges}
  }

  /** The flag raised once `name` is in the index (it must have been written behind). */
  writtenFlag(name: Name<A>): Int32Array {
    const flag = this.flags.get(name)
    if (!flag) throw new Error(`array store: ${name} not written`)
    return flag
  }

  /**
   * Room in the index for array `name`, which a phase writes there in pieces instead of holding it
   * (a pass at a time: reverse-passes.ts). The store holds where it lies; its write actions then
   * have nothing to do.
   */
  reserve<K extends Name<A>>(name: K, length: number): ReservedArray {
    const reserved = this.index.reserve(name, length)
    this.flags.set(name, reserved.file.written)
    this.arrays.set(name, reserved.file)
    return reserved
  }

  /**
   * Runs `phase` with the store, in a frame of its own (the file's comment), and holds what it
   * returns; then runs `after`.
   */
  run(phase: (store: this) => Partial<A> | void, after: readonly StoreAction<Name<A>>[] = []): void {
    this.runInFrame(phase)
    if (after.some(a => 'write' in a || 'spill' in a || 'writeAndReuse' in a)) this.writing()
    for (const action of after) this.apply(action)
  }

  /** The store's actions, in order. */
  apply(action: StoreAction<Name<A>>): void {
    if ('write' in action) this.write(action.write)
    else if ('spill' in action) this.spill(action.spill)
    else if ('readBack' in action) this.readBack(action.readBack, action.after)
    else if ('writeAndReuse' in action) this.writeAndReuse(action.writeAndReuse, action.as)
    else if ('drop' in action) this.drop(...action.drop)
    else if ('forget' in action) for (const name of action.forget) this.arrays.delete(name)
    else if ('if' in action) for (const a of (this.arrays.get(action.if) === true ? action.then : action.else) ?? []) this.apply(a)
    else this.collect()
  }

  /** Drops `names` and collects the garbage: their memory is gone once no other thread holds them. */
  drop(...names: Name<A>[]): void {
    for (const name of names) this.arrays.delete(name)
    this.collect()
  }

  /** A full collection (collect-garbage.ts). */
  collect(): void {
    collectGarbage()
  }

  private runInFrame(phase: (store: this) => Partial<A> | void): void {
    inFrameOfItsOwn(() => {
      const out = phase(this)
      if (out) this.put(out)
    })
  }

  private write(name: Name<A>): void {
    if (this.flags.has(name)) return
    const flag = new Int32Array(new SharedArrayBuffer(4))
    this.index.addBehind(name, this.get(name) as ArrayBufferView, flag)
    this.flags.set(name, flag)
  }

  private spill(name: Name<A>): void {
    if (!this.flags.has(name)) this.write(name)
    else if (!ArrayBuffer.isView(this.get(name))) return // in the index only (reserve)
    this.arrays.set(name, this.index.fileArray(name, this.writtenFlag(name)))
  }

  /** Both never take memory together: `after` (the arrays this one makes room for) are written and collected first. */
  private readBack(name: Name<A>, after: Name<A>[]): void {
    for (const a of after) this.index.awaitWritten(this.writtenFlag(a))
    this.collect()
    const file = this.get(name) as FileArray
    this.arrays.set(name, readFileArray(file, sharedUint32(file.length)))
  }

  private writeAndReuse(name: Name<A>, as: Name<A>): void {
    // Written in place already (reserve): no memory to reuse.
    if (this.flags.has(name)) return
    const a = this.take(name) as ArrayBufferView
    this.index.addPieces(name, [a])
    this.arrays.set(as, a)
  }
}

/** The names of the store's arrays. */
export type Name<A> = keyof A & string
