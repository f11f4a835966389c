import {STATE_NAMES, type StateName} from '../heap/states.js'
import {HeapObjects, type ObjectRef} from '../heap/objects.js'
import {DamagedIndexError, IndexFile} from './index-file.js'
import {IndexColumn} from './index-column.js'
import {metaProblem, type IndexMeta} from './index-meta.js'
import {firstAtOrAbove, lastAtOrBelow} from '../util/search.js'
import {ROOT_KIND_NAMES, type RootKindName} from '../graph/csr.js'
import type {AddressSpace} from '../core/address-space.js'
import {EdgeOffsets, type ObjectEdges} from './edge-offsets.js'
import {VIA_NONE, viaLabel, type ViaLabel} from '../naming/via.js'
import type {ArrayName, Stage} from './schema.js'
import {ObjectColumns} from './object-columns.js'
import {decodeHolderTable, type Holder, type HolderTable} from './holder-table.js'

export type {ObjectRef}

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

/** Edges read at a time where a list is searched (256 KiB). */
const EDGE_CHUNK = 1 << 16

/** One span's entry in the span table. */
export interface SpanEntry {
  record: number
  start: number
  pages: number
  sizeClass: number
  location: number
  objectSize: number
  firstObject: number
  objectCount: number
}

/** The span table whole, as walks over every object want it. */
interface WholeSpans {
  start: Float64Array
  pages: Float64Array
  objectSize: Float64Array
  firstObject: Float64Array
  objectCount: Float64Array
  sizeClass: Uint8Array
  location: Uint8Array
  record: Float64Array
  objects: HeapObjects
}

/** The root arrays, whole (roots are few), by target. */
export interface RootTable {
  kind: Uint8Array
  thread: Int32Array
  address: Float64Array
  to: Uint32Array
  toOffset: Uint32Array
}

/**
 * Queries over an index without re-reading the core: per-object facts and edge lists are ranged
 * reads of the arrays they live in; the span table is read by block where a lookup touches it,
 * and whole (then checked whole) the first time something walks it. The only query surface: code
 * outside src/index reads the index through its methods and `columns`, never through `file`.
 */
export class HeapIndex {
  readonly meta: IndexMeta
  readonly pageSize: number
  /** The per-object arrays and others read whole, for answers that walk every object. */
  readonly columns: ObjectColumns
  private tcObjects?: Float64Array
  private tcOwner?: Uint16Array
  private roots?: RootTable
  private readonly spanColumns: Record<keyof SpanEntry, IndexColumn>
  private whole?: WholeSpans
  private offsets?: EdgeOffsets
  /** The span holding each 256th slot, for objectBounds. */
  private slotBlockSpan?: Uint32Array
  private core?: {memory: AddressSpace; corePath: string}
  private holders?: HolderTable

  /** Opens and checks an index file; null when it is from another format version. */
  static open(path: string): HeapIndex | null {
    const file = IndexFile.open(path)
    if (!file) return null
    try {
      return new HeapIndex(file)
    } catch (e) {
      file.close()
      throw e
    }
  }

  /**
   * Checks the meta's shape before anything is read by it (the file checked its arrays against
   * the schema, their length groups included, when it was opened). `file` is for src/index's own
   * views (samples, retention, sightings).
   */
  constructor(readonly file: IndexFile) {
    const problem = metaProblem(file.meta)
    if (problem) throw new DamagedIndexError(file.path, problem)
    this.meta = file.meta as IndexMeta
    this.pageSize = this.meta.pageSize
    this.columns = new ObjectColumns(file)
    const column = (name: ArrayName) => new IndexColumn(file, name)
    this.spanColumns = {
      record: column('span.record'),
      start: column('span.start'),
      pages: column('span.pages'),
      sizeClass: column('span.sizeClass'),
      location: column('span.location'),
      objectSize: column('span.objectSize'),
      firstObject: column('span.firstObject'),
      objectCount: column('span.objectCount'),
    }
  }

  /** The index file's path (for a problem found in its contents). */
  get path(): string {
    return this.file.path
  }

  /** Whether the index holds a stage's arrays (a model-stage index has no graph: schema.ts STAGES). */
  holds(stage: Stage): boolean {
    return this.file.stages.includes(stage)
  }

  close(): void {
    this.file.close()
  }

  /** Every object slot and the slot at an address, through the same API as the in-memory model (reads the span table whole). */
  get objects(): HeapObjects {
    return this.wholeSpans().objects
  }

  get spanStart(): Float64Array {
    return this.wholeSpans().start
  }

  get spanPages(): Float64Array {
    return this.wholeSpans().pages
  }

  get spanObjectSize(): Float64Array {
    return this.wholeSpans().objectSize
  }

  get spanFirstObject(): Float64Array {
    return this.wholeSpans().firstObject
  }

  get spanObjectCount(): Float64Array {
    return this.wholeSpans().objectCount
  }

  get spanSizeClass(): Uint8Array {
    return this.wholeSpans().sizeClass
  }

  get spanLocation(): Uint8Array {
    return this.wholeSpans().location
  }

  get spanRecord(): Float64Array {
    return this.wholeSpans().record
  }

  /** One span's entry (read by block; checked against its neighbours before it is used). */
  span(s: number): SpanEntry {
    this.checkSpan(s)
    const c = this.spanColumns
    return {
      record: c.record.get(s), start: c.start.get(s), pages: c.pages.get(s), sizeClass: c.sizeClass.get(s),
      location: c.location.get(s), objectSize: c.objectSize.get(s), firstObject: c.firstObject.get(s), objectCount: c.objectCount.get(s),
    }
  }

  /** The span table read whole and checked, once. */
  private wholeSpans(): WholeSpans {
    if (!this.whole) {
      const f = this.file
      const spans = {
        start: f.array('span.start'),
        pages: f.array('span.pages'),
        objectSize: f.array('span.objectSize'),
        firstObject: f.array('span.firstObject'),
        objectCount: f.array('span.objectCount'),
        sizeClass: f.array('span.sizeClass'),
        location: f.array('span.location'),
        record: f.array('span.record'),
      }
      const problem = spanTableProblem(spans, this.objectCount)
      if (problem) throw this.damaged(problem)
      this.whole = {...spans, objects: new HeapObjects(spans, this.pageSize, () => f.array('object.state'))}
    }
    return this.whole
  }

  get objectCount(): number {
    return this.file.length('object.state')
  }

  get spanCount(): number {
    return this.spanColumns.start.length
  }

  /**
   * The object slot holding addr, or undefined outside the heap's spans (or in a span's tail
   * waste). Found in the span table by block reads unless it is read whole already.
   */
  objectAt(addr: number): ObjectRef | undefined {
    if (this.whole) return this.whole.objects.findObject(addr)
    const s = this.spanColumns.start.lastAtOrBelow(addr)
    if (s < 0) return undefined
    const span = this.span(s)
    if (addr >= span.start + span.pages * this.pageSize) return undefined
    const k = Math.floor((addr - span.start) / span.objectSize)
    if (k >= span.objectCount) return undefined
    return {index: span.firstObject + k, start: span.start + k * span.objectSize, size: span.objectSize, span: s}
  }

  /** The object of a slot index (ids come from the index's own edges and roots: checked, not trusted). */
  object(index: number): ObjectRef {
    if (!(Number.isInteger(index) && index >= 0 && index < this.objectCount)) throw this.damaged(`object id ${index} is out of range`)
    if (this.whole) return this.whole.objects.object(index)
    const s = this.spanColumns.firstObject.lastAtOrBelow(index)
    const span = this.span(s)
    return {index, start: span.start + (index - span.firstObject) * span.objectSize, size: span.objectSize, span: s}
  }

  /**
   * The object of slot `index` as [start[at], end[at]) (the edge walks' per-target lookup, which
   * allocates nothing where the span table is read whole: the export looks up every edge's target).
   */
  objectBounds(index: number, start: Float64Array, end: Float64Array, at: number): void {
    if (!this.whole) {
      const o = this.object(index)
      start[at] = o.start
      end[at] = o.start + o.size
      return
    }
    if (!(Number.isInteger(index) && index >= 0 && index < this.objectCount)) throw this.damaged(`object id ${index} is out of range`)
    const {firstObject, objectSize} = this.whole
    // The spans holding slots b·256 and (b+1)·256 bound a short binary search.
    const blocks = (this.slotBlockSpan ??= slotBlockSpans(firstObject, this.objectCount))
    const b = index >>> SLOT_BLOCK_SHIFT
    const s = lastAtOrBelowIn(firstObject, index, blocks[b]!, blocks[b + 1]!)
    const size = objectSize[s]!
    start[at] = this.whole.start[s]! + (index - firstObject[s]!) * size
    end[at] = start[at]! + size
  }

  /**
   * Checks span s against its neighbours as the whole table's check would (spanTableProblem):
   * in address order, its slots right after the previous span's and right before the next's.
   */
  private checkSpan(s: number): void {
    const c = this.spanColumns
    const n = c.start.length
    if (!(Number.isInteger(s) && s >= 0 && s < n)) throw this.damaged(`span ${s} is out of range`)
    const start = c.start.get(s)
    const first = c.firstObject.get(s)
    const end = first + c.objectCount.get(s)
    if (s > 0 && !(start > c.start.get(s - 1))) throw this.damaged(`span ${s} is out of address order`)
    if (s + 1 < n && !(c.start.get(s + 1) > start)) throw this.damaged(`span ${s + 1} is out of address order`)
    if (!(c.objectSize.get(s) > 0)) throw this.damaged(`span ${s} has bad object slots`)
    if (s === 0 ? first !== 0 : c.firstObject.get(s - 1) + c.objectCount.get(s - 1) !== first) throw this.damaged(`span ${s} has bad object slots`)
    if (s + 1 < n ? c.firstObject.get(s + 1) !== end : end !== this.objectCount) throw this.damaged(s + 1 < n ? `span ${s + 1} has bad object slots` : 'the span table does not cover the object arrays')
  }

  state(index: number): StateName {
    const state = STATE_NAMES[this.file.slice('object.state', index, 1)[0]!]
    if (state === undefined) throw this.damaged(`object ${index} has no valid state`)
    return state
  }

  type(index: number): string | null {
    return this.typeName(this.typeId(index))
  }

  /** An object's name id in object.type (0: no name). */
  typeId(index: number): number {
    return this.file.slice('object.type', index, 1)[0]!
  }

  /** How an object's name was known (naming/via.ts): '' when it has none. */
  via(index: number): ViaLabel {
    const code = this.file.slice('object.via', index, 1)[0]!
    const label = viaLabel(code)
    if (label === '' && code !== VIA_NONE) throw this.damaged(`object ${index} has no valid naming tier`)
    return label
  }

  /** What sort of block a type id names ("object", "std::string buffer", …; null for id 0). */
  typeKind(id: number): string | null {
    if (!(id >= 0 && id <= this.meta.typeKinds.length)) throw this.damaged(`type id ${id} is out of range`)
    return id === 0 ? null : this.meta.typeKinds[id - 1]!
  }

  /** The name of a type id of object.type (0: no type). */
  typeName(id: number): string | null {
    if (!(id >= 0 && id <= this.meta.typeNames.length)) throw this.damaged(`type id ${id} is out of range`)
    return id === 0 ? null : this.meta.typeNames[id - 1]!
  }

  /** Each span's slots by state as analyze counted them (queries/span-slot-states.ts checks them), or null from an index made before it did. */
  spanSlotStates(): Uint32Array | null {
    return this.file.has('span.slotStates') ? this.file.array('span.slotStates') : null
  }

  /** Live objects and bytes per name id, size class and naming tier, as analyze counted them (queries/name-counts.ts). */
  nameCounts() {
    const f = this.file
    const counts = {
      'type.liveObjects': f.array('type.liveObjects'),
      'type.liveBytes': f.array('type.liveBytes'),
      'type.firstLive': f.array('type.firstLive'),
      'type.viaObjects': f.array('type.viaObjects'),
      'sizeClass.untypedObjects': f.array('sizeClass.untypedObjects'),
      'sizeClass.untypedBytes': f.array('sizeClass.untypedBytes'),
      'sizeClass.firstUntyped': f.array('sizeClass.firstUntyped'),
    }
    // A few KiB: every value checked (counts whole and not negative, first slots -1 or a slot).
    const slots = f.length('object.state')
    for (const [name, a] of Object.entries(counts)) {
      const first = name.includes('first')
      for (const v of a) if (!(Number.isSafeInteger(v) && (first ? v >= -1 && v < slots : v >= 0))) throw this.damaged(`${name} holds ${v}`)
    }
    return counts
  }

  /** The holder walk's results, as analyze stored them (read and checked once). */
  holderTable(): HolderTable {
    this.holders ??= decodeHolderTable(this.file.array('holder.table'), this.file.path, this.file.length('object.holder'))
    return this.holders
  }

  /** An untyped live object's holder (and where in it its chain starts), or null for any other slot. */
  /**
   * Whether a root of the program reaches the slot, no root does (a leak when live), or only the
   * allocator keeps it (graph/allocator-internal.ts: a sampled object's proxy, its singleton).
   */
  reachability(index: number): 'reached' | 'leaked' | 'allocator' {
    const r = this.file.slice('object.reachable', index, 1)[0]
    return r === 2 ? 'allocator' : r === 1 ? 'reached' : 'leaked'
  }

  holderOf(index: number): {holder: Holder; offset: number} | null {
    const k = this.file.slice('object.holder', index, 1)[0]!
    if (k < 0) return null
    const holder = this.holderTable().holders[k]
    if (!holder) throw this.damaged(`object ${index} has no valid holder`)
    return {holder, offset: this.file.slice('object.holderOffset', index, 1)[0]!}
  }

  /** Values inside the arrays are the index's own, but the file may have been damaged since. */
  private damaged(problem: string): DamagedIndexError {
    return new DamagedIndexError(this.file.path, problem)
  }

  sizeClass(obj: ObjectRef): number {
    return this.whole ? this.whole.sizeClass[obj.span]! : this.span(obj.span).sizeClass
  }

  /** For a thread-cache object: the cache holding it, with its thread (null when unattributed) or its CPU (per-CPU caches). */
  threadOf(index: number): {cache: number; tid: number | null; cpu: number | null} | undefined {
    this.tcObjects ??= this.file.array('threadCache.objects')
    this.tcOwner ??= this.file.array('threadCache.owner')
    const at = firstAtOrAbove(this.tcObjects, index)
    if (this.tcObjects[at] !== index) return undefined
    const c = this.meta.threadCaches[this.tcOwner[at]!]
    if (!c) throw this.damaged(`thread-cache object ${index} has no valid owner`)
    return {cache: c.address, tid: c.tid, cpu: c.cpu ?? null}
  }

  /** The core the index was made from, where edge offsets are found (edge-offsets.ts). */
  useCore(memory: AddressSpace, corePath: string): void {
    this.core = {memory, corePath}
    this.offsets = this.edgeOffsets()
  }

  /**
   * A walker of its own over the core's edges, reading the core in windows of `windowBytes`: the
   * export's walks every object in order in large ones; a query's reads 64 KiB windows, through
   * the core's block cache.
   */
  edgeOffsets(windowBytes?: number): EdgeOffsets {
    if (!this.core) throw new Error('edge offsets asked of an index without its core')
    return new EdgeOffsets(this.file, this, this.core.memory, this.core.corePath, windowBytes)
  }

  /** Object `index`'s edges [first + skip, first + skip + count) with their offsets (all by default). */
  objectEdges(index: number, skip = 0, count = Infinity): ObjectEdges {
    const [a, b] = this.file.slice('edge.outStart', index, 2)
    if (!(a! <= b!)) throw this.damaged(`object ${index} has a bad edge list`)
    const e0 = Math.min(b!, a! + skip)
    const e1 = Math.min(b!, e0 + count)
    this.offsets ??= this.edgeOffsets()
    return this.offsets.edges(index, a!, e0, e1)
  }

  /** Number of outgoing edges. */
  outDegree(index: number): number {
    const [a, b] = this.file.slice('edge.outStart', index, 2)
    return b! - a!
  }

  /** The targets of object `index`'s edges, in order (no offsets: the index alone). */
  outTargets(index: number): Uint32Array {
    const [a, b] = this.file.slice('edge.outStart', index, 2)
    if (!(a! <= b!)) throw this.damaged(`object ${index} has a bad edge list`)
    return this.file.slice('edge.to', a!, b! - a!)
  }

  outEdges(index: number): EdgeRef[] {
    const {to, offset, toOffset} = this.objectEdges(index)
    return Array.from(to, (t, i) => ({from: index, to: t, offset: offset[i]!, toOffset: toOffset[i]!}))
  }

  /**
   * The first pointer from one object to another (offsets), without listing every edge of the
   * source: searched from the smaller side, the source's targets or the target's referrers (a
   * path step out of a huge array of pointers reads the target's few referrers, not the array's
   * millions of targets), each in chunks. The target's referrers are in forward edge order (the
   * reverse pass keeps it), so the first one from `from` is the source's first pointer to `to`.
   */
  edgeBetween(from: number, to: number): EdgeRef | undefined {
    const [a, b] = this.file.slice('edge.outStart', from, 2)
    const [c, d] = this.file.slice('edge.inStart', to, 2)
    const found = d! - c! < b! - a! ? this.firstIndexOf('edge.inFrom', c!, d!, from) : this.firstIndexOf('edge.to', a!, b!, to)
    if (found < 0) return undefined
    const e = d! - c! < b! - a! ? this.file.slice('edge.inEdge', found, 1)[0]! : found
    return this.edgeRef(e, from, to)
  }

  /** The first position in [start, end) of a Uint32 array holding `value`, or -1; read in chunks. */
  private firstIndexOf(name: 'edge.inFrom' | 'edge.to', start: number, end: number, value: number): number {
    for (let at = start; at < end; at += EDGE_CHUNK) {
      const k = this.file.slice(name, at, Math.min(EDGE_CHUNK, end - at)).indexOf(value)
      if (k >= 0) return at + k
    }
    return -1
  }

  /** Edge e of object `from`, to `to` (as the index says), with its offsets. */
  private edgeRef(e: number, from: number, to: number): EdgeRef {
    const [a, b] = this.file.slice('edge.outStart', from, 2)
    if (!(e >= a! && e < b!)) throw this.damaged(`edge ${e} is not one of object ${from}'s`)
    const found = this.objectEdges(from, e - a!, 1)
    if (found.to[0] !== to) throw this.damaged(`edge ${e} does not point to object ${to}`)
    return {from, to, offset: found.offset[0]!, toOffset: found.toOffset[0]!}
  }

  /** Number of incoming edges. */
  inDegree(index: number): number {
    const [a, b] = this.file.slice('edge.inStart', index, 2)
    return b! - a!
  }

  /** The sources of the first `limit` incoming edges (by source address; a source once per edge). */
  referrerIds(index: number, limit = Infinity): Uint32Array {
    const [a, b] = this.file.slice('edge.inStart', index, 2)
    return this.file.slice('edge.inFrom', a!, Math.min(b! - a!, limit))
  }

  /**
   * Incoming edges, the first `limit` of them (by source address), leaving out those from
   * `exceptFrom` (an object's pointers into itself); the sources are read in chunks until
   * `limit` are found, the offsets only for those. `skip`: from the skip-th incoming edge on (a
   * page of a hub's millions of referrers reads that page alone).
   */
  inEdges(index: number, limit = Infinity, exceptFrom = -1, skip = 0): EdgeRef[] {
    const [a, b] = this.file.slice('edge.inStart', index, 2)
    const edges: EdgeRef[] = []
    for (let at = a! + skip; at < b! && edges.length < limit; at += EDGE_CHUNK) {
      const from = this.file.slice('edge.inFrom', at, Math.min(EDGE_CHUNK, b! - at))
      for (let i = 0; i < from.length && edges.length < limit; i++) {
        if (from[i] === exceptFrom) continue
        edges.push(this.edgeRef(this.file.slice('edge.inEdge', at + i, 1)[0]!, from[i]!, index))
      }
    }
    return edges
  }

  /** Every root (read once: roots are few). */
  rootTable(): RootTable {
    return (this.roots ??= {
      kind: this.file.array('root.kind'),
      thread: this.file.array('root.thread'),
      address: this.file.array('root.address'),
      to: this.file.array('root.to'),
      toOffset: this.file.array('root.toOffset'),
    })
  }

  /** Roots pointing into the object (binary-searched by target). */
  rootsOf(index: number): RootRef[] {
    const r = this.rootTable()
    const out: RootRef[] = []
    for (let i = firstAtOrAbove(r.to, index); i < r.to.length && r.to[i] === index; i++) {
      out.push({kind: ROOT_KIND_NAMES[r.kind[i]!]!, thread: r.thread[i]! >= 0 ? r.thread[i]! : null, address: r.address[i]!, to: index, toOffset: r.toOffset[i]!})
    }
    return out
  }
}

const SLOT_BLOCK_SHIFT = 8

/** For each block of 2^SLOT_BLOCK_SHIFT slots, the span holding its first slot, and one past the last. */
function slotBlockSpans(firstObject: Float64Array, objectCount: number): Uint32Array {
  const blocks = (objectCount >>> SLOT_BLOCK_SHIFT) + 1
  const out = new Uint32Array(blocks + 1)
  for (let b = 0, s = 0; b < blocks; b++) {
    const slot = b * 2 ** SLOT_BLOCK_SHIFT // not <<: slots pass 2^31
    while (s + 1 < firstObject.length && firstObject[s + 1]! <= slot) s++
    out[b] = s
  }
  out[blocks] = Math.max(0, firstObject.length - 1)
  return out
}

/** The last i in [lo, hi] with sorted[i] <= value (sorted[lo] <= value assumed). */
function lastAtOrBelowIn(sorted: Float64Array, value: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (sorted[mid]! <= value) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** Spans in address order, each span's slots within the object arrays, in order (checked whole). */
function spanTableProblem(spans: Pick<WholeSpans, 'start' | 'firstObject' | 'objectSize' | 'objectCount'>, objectCount: number): string | null {
  let next = 0
  for (let s = 0; s < spans.start.length; s++) {
    if (s > 0 && !(spans.start[s]! > spans.start[s - 1]!)) return `span ${s} is out of address order`
    if (spans.firstObject[s] !== next || !(spans.objectSize[s]! > 0)) return `span ${s} has bad object slots`
    next += spans.objectCount[s]!
  }
  return next === objectCount ? null : 'the span table does not cover the object arrays'
}
