import {NOT_IN_TREE, groupOfIdom} from '../dominators/dominator-ids.js'
import {FROM_ROOT, UNREACHED} from '../graph/reachability.js'
import type {HeapIndex} from './heap-index.js'
import type {IndexFile} from './index-file.js'
import type {ArrayNamesOf} from './schema.js'

/** The Uint32 arrays read a word at a time or whole. */
type WordArray = ArrayNamesOf<'u32'>

/** Single reads of one array before it is read whole instead. */
const WHOLE_AFTER = 512

/**
 * The retention arrays of an index (paths from roots, dominator tree, retained sizes), read by
 * range: a path costs its length in reads, a dominator subtree its size.
 */
export class RetentionIndex {
  private readonly file: IndexFile
  private readonly reads = new Map<WordArray, number>()
  private readonly whole = new Map<WordArray, Uint32Array>()
  /** The core's threads by tid, in the order the per-thread arrays use. */
  readonly threadTids: number[]

  /**
   * `wholeAfter`: single reads of one array before it is read whole instead (a server answering
   * page after page passes Infinity: reading a 30 M-object array whole is a second of one page's
   * answer, and its memory for as long as the server runs).
   */
  constructor(
    index: HeapIndex,
    private readonly wholeAfter = WHOLE_AFTER,
  ) {
    this.file = index.file
    this.threadTids = Array.from(index.file.array('thread.tid'))
  }

  /** The breadth-first parent of an object: an object id, 'root' (a root points to it) or null (unreached). */
  parent(id: number): number | 'root' | null {
    const p = this.word('object.parent', id)
    return p === FROM_ROOT ? 'root' : p === UNREACHED ? null : p
  }

  /**
   * Immediate dominator: an object id; 'root' when only the roots together dominate it; {thread}
   * when one thread's registers, stack and TLS alone reach it; null when it is not live.
   */
  idom(id: number): number | 'root' | {thread: number} | null {
    const d = this.word('object.idom', id)
    if (d === NOT_IN_TREE) return null
    const n = this.file.length('object.idom')
    if (d < n) return d
    const group = groupOfIdom(d, n, this.file.length('thread.retainedBytes'))
    return group >= 0 ? {thread: this.threadTids[group]!} : 'root'
  }

  /** Per thread of the core (in its order): bytes and objects reachable only from that thread. */
  threadRetained(): {bytes: Float64Array; objects: Float64Array} {
    return {bytes: this.file.array('thread.retainedBytes'), objects: this.file.array('thread.retainedObjects')}
  }

  retained(id: number): {bytes: number; objects: number} {
    return {bytes: this.file.slice('object.retainedBytes', id, 1)[0]!, objects: this.file.slice('object.retainedObjects', id, 1)[0]!}
  }

  /** Dominator-tree children (the largest first, the others ascending); of the virtual root when id is null; at most `limit`, from the `skip`-th on. */
  children(id: number | null, limit = Number.POSITIVE_INFINITY, skip = 0): Uint32Array {
    const range = this.childRange(id)
    const end = range.b
    const a = Math.min(end, range.a + skip)
    const b = Math.min(end, a + limit)
    const whole = this.whole.get('dom.child')
    if (whole) return whole.subarray(a, b)
    if (this.counted('dom.child') > this.wholeAfter) return this.load('dom.child').subarray(a, b)
    return this.file.slice('dom.child', a, b - a)
  }

  childCount(id: number | null): number {
    const {a, b} = this.childRange(id)
    return b - a
  }

  /** The child that retains the most (analysis puts it first), or null for a leaf. */
  largestChild(id: number | null): number | null {
    const kids = this.children(id, 1)
    return kids.length > 0 ? kids[0]! : null
  }

  private childRange(id: number | null): {a: number; b: number} {
    const at = id ?? this.file.length('dom.childStart') - 2
    return {a: this.word('dom.childStart', at), b: this.word('dom.childStart', at + 1)}
  }

  /** Retained bytes of each id, in as few reads as their spread allows. */
  retainedBytesOf(ids: Uint32Array): Float64Array {
    return this.gather<Float64Array>('object.retainedBytes', ids, n => new Float64Array(n))
  }

  retainedObjectsOf(ids: Uint32Array): Uint32Array {
    return this.gather<Uint32Array>('object.retainedObjects', ids, n => new Uint32Array(n))
  }

  typesOf(ids: Uint32Array): Uint32Array {
    return this.gather<Uint32Array>('object.type', ids, n => new Uint32Array(n))
  }

  /** Leaked objects no other leaked object reaches (one per leaked cycle nothing else points to). */
  leakStarts(): Uint32Array {
    return this.file.array('dom.leakStarts')
  }

  /** Objects dominated by the virtual root alone, largest retained first. */
  top(limit: number): Uint32Array {
    return this.file.slice('dom.top', 0, limit)
  }

  topCount(): number {
    return this.file.length('dom.top')
  }

  /** Per type id: bytes and objects its objects retain, each byte once. */
  typeRetained(): {bytes: Float64Array; objects: Float64Array} {
    return {bytes: this.file.array('type.retainedBytes'), objects: this.file.array('type.retainedObjects')}
  }

  /** Sources of the incoming edges of an object (one read). */
  referrers(id: number): Uint32Array {
    const [a, b] = this.file.slice('edge.inStart', id, 2)
    return this.file.slice('edge.inFrom', a!, b! - a!)
  }

  /**
   * One word of a Uint32 array: read alone while a query asks for few, the whole array once it
   * asks for many (a path down a long list, a walk down the dominator tree): a sequential read of
   * the array costs less than that many single reads.
   */
  private word(name: WordArray, at: number): number {
    const whole = this.whole.get(name)
    if (whole) return whole[at]!
    if (this.counted(name) > this.wholeAfter) return this.load(name)[at]!
    return this.file.slice(name, at, 1)[0]!
  }

  private counted(name: WordArray): number {
    const n = (this.reads.get(name) ?? 0) + 1
    this.reads.set(name, n)
    return n
  }

  private load(name: WordArray): Uint32Array {
    const a = this.file.array(name)
    this.whole.set(name, a)
    return a
  }

  private gather<T extends Float64Array | Uint32Array>(name: 'object.retainedBytes' | 'object.retainedObjects' | 'object.type', ids: Uint32Array, make: (n: number) => T): T {
    const out = make(ids.length)
    if (ids.length === 0) return out
    let lo = ids[0]!
    let hi = lo
    for (let i = 1; i < ids.length; i++) {
      if (ids[i]! < lo) lo = ids[i]!
      else if (ids[i]! > hi) hi = ids[i]!
    }
    const span = hi - lo + 1
    // Many ids, or ids close together: one ranged read (chunked by the file layer) beats one read each.
    if (span <= ids.length * 64 || ids.length >= 1 << 14) {
      const run = this.file.slice(name, lo, span)
      for (let i = 0; i < ids.length; i++) out[i] = run[ids[i]! - lo]!
    } else {
      for (let i = 0; i < ids.length; i++) out[i] = this.file.slice(name, ids[i]!, 1)[0]!
    }
    return out
  }
}
