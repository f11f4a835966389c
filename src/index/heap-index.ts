import {STATE_NAMES, type StateName} from '../tcmalloc/object-states.js'
import {ROOT_KIND_NAMES, type RootKindName} from '../graph/csr.js'
import type {IndexMeta} from '../analysis/analyze-core.js'
import type {IndexFile} from './index-file.js'
import {firstAtOrAbove, lastAtOrBelow} from '../util/search.js'

export interface ObjectRef {
  /** Object slot index (node id in the index). */
  index: number
  start: number
  size: number
  span: number
}

export interface EdgeRef {
  from: number
  to: number
  offset: number
  toOffset: number
}

export interface RootRef {
  kind: RootKindName
  thread: number | null
  /** Where the pointer is stored (for a register root, the register's index). */
  address: number
  to: number
  toOffset: number
}


/**
 * Queries over an index without re-reading the core: the span table (small) is loaded whole,
 * per-object facts and edge lists are ranged reads of the arrays they live in.
 */
export class HeapIndex {
  readonly meta: IndexMeta
  readonly spanStart: Float64Array
  readonly spanPages: Float64Array
  readonly spanObjectSize: Float64Array
  readonly spanFirstObject: Float64Array
  readonly spanObjectCount: Float64Array
  readonly spanSizeClass: Uint8Array
  readonly spanLocation: Uint8Array
  readonly spanRecord: Float64Array
  readonly pageSize: number
  private tcObjects?: Float64Array
  private tcOwner?: Uint16Array
  private roots?: {kind: Uint8Array; thread: Int32Array; address: Float64Array; to: Uint32Array; toOffset: Uint32Array}

  constructor(readonly file: IndexFile) {
    this.meta = file.meta as IndexMeta
    this.pageSize = this.meta.summary.allocator.pageSize
    this.spanStart = file.array('span.start')
    this.spanPages = file.array('span.pages')
    this.spanObjectSize = file.array('span.objectSize')
    this.spanFirstObject = file.array('span.firstObject')
    this.spanObjectCount = file.array('span.objectCount')
    this.spanSizeClass = file.array('span.sizeClass')
    this.spanLocation = file.array('span.location')
    this.spanRecord = file.array('span.record')
  }

  get objectCount(): number {
    return this.file.length('object.state')
  }

  get spanCount(): number {
    return this.spanStart.length
  }

  /** The object slot holding addr, or undefined outside the heap's spans (or in a span's tail waste). */
  objectAt(addr: number): ObjectRef | undefined {
    const hi = lastAtOrBelow(this.spanStart, addr)
    if (hi < 0 || addr >= this.spanStart[hi]! + this.spanPages[hi]! * this.pageSize) return undefined
    const size = this.spanObjectSize[hi]!
    const k = Math.floor((addr - this.spanStart[hi]!) / size)
    if (k >= this.spanObjectCount[hi]!) return undefined
    return {index: this.spanFirstObject[hi]! + k, start: this.spanStart[hi]! + k * size, size, span: hi}
  }

  /** The object of a slot index. */
  object(index: number): ObjectRef {
    const hi = lastAtOrBelow(this.spanFirstObject, index)
    const size = this.spanObjectSize[hi]!
    return {index, start: this.spanStart[hi]! + (index - this.spanFirstObject[hi]!) * size, size, span: hi}
  }

  state(index: number): StateName {
    return STATE_NAMES[this.file.slice<Uint8Array>('object.state', index, 1)[0]!]!
  }

  type(index: number): string | null {
    const id = this.file.slice<Uint32Array>('object.type', index, 1)[0]!
    return id === 0 ? null : (this.meta.typeNames[id - 1] ?? null)
  }

  sizeClass(obj: ObjectRef): number {
    return this.spanSizeClass[obj.span]!
  }

  /** For a thread-cache object: the thread whose cache holds it (null when unattributed). */
  threadOf(index: number): {cache: number; tid: number | null} | undefined {
    this.tcObjects ??= this.file.array('threadCache.objects')
    this.tcOwner ??= this.file.array('threadCache.owner')
    const at = firstAtOrAbove(this.tcObjects, index)
    if (this.tcObjects[at] !== index) return undefined
    const c = this.meta.threadCaches[this.tcOwner[at]!]!
    return {cache: c.address, tid: c.tid}
  }

  outEdges(index: number): EdgeRef[] {
    const [a, b] = this.file.slice<Uint32Array>('edge.outStart', index, 2)
    const n = b! - a!
    const to = this.file.slice<Uint32Array>('edge.to', a!, n)
    const offset = this.file.slice<Uint32Array>('edge.offset', a!, n)
    const toOffset = this.file.slice<Uint32Array>('edge.toOffset', a!, n)
    return Array.from(to, (t, i) => ({from: index, to: t, offset: offset[i]!, toOffset: toOffset[i]!}))
  }

  /** Number of incoming edges. */
  inDegree(index: number): number {
    const [a, b] = this.file.slice<Uint32Array>('edge.inStart', index, 2)
    return b! - a!
  }

  /** Incoming edges, the first `limit` of them (by source address). */
  inEdges(index: number, limit = Infinity): EdgeRef[] {
    const [a, b] = this.file.slice<Uint32Array>('edge.inStart', index, 2)
    const n = Math.min(b! - a!, limit)
    const edges = this.file.slice<Uint32Array>('edge.inEdge', a!, n)
    const from = this.file.slice<Uint32Array>('edge.inFrom', a!, n)
    return Array.from(edges, (e, i) => ({
      from: from[i]!,
      to: index,
      offset: this.file.slice<Uint32Array>('edge.offset', e, 1)[0]!,
      toOffset: this.file.slice<Uint32Array>('edge.toOffset', e, 1)[0]!,
    }))
  }

  /** Roots pointing into the object (roots are few: loaded once, binary-searched by target). */
  rootsOf(index: number): RootRef[] {
    const r = (this.roots ??= {
      kind: this.file.array('root.kind'),
      thread: this.file.array('root.thread'),
      address: this.file.array('root.address'),
      to: this.file.array('root.to'),
      toOffset: this.file.array('root.toOffset'),
    })
    const out: RootRef[] = []
    for (let i = firstAtOrAbove(r.to, index); i < r.to.length && r.to[i] === index; i++) {
      out.push({kind: ROOT_KIND_NAMES[r.kind[i]!]!, thread: r.thread[i]! >= 0 ? r.thread[i]! : null, address: r.address[i]!, to: index, toOffset: r.toOffset[i]!})
    }
    return out
  }
}
