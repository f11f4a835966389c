import {BY_VIRTUAL_ROOT, groupOfIdom} from '../dominators/dominator-ids.js'
import {ALLOCATOR_INTERNAL, UNREACHED} from '../graph/allocator-internal.js'
import {regionOf, type RootRegion} from '../graph/root-regions.js'
import type {HeapIndex, RootRef} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {unwindThread} from '../program/unwind.js'
import {demangle} from '../elf/demangle.js'
import {codeLabel} from './code-label.js'
import {rootRefLabel} from './root-label.js'
import {anchorText, mappingAnchors} from './mapping-anchors.js'
import {objectBrief} from './object-brief.js'
import {DamagedIndexError} from '../index/index-file.js'
import {encodeHolderTable, type Holder, type HolderGroup, type HolderScope} from '../index/holder-table.js'

export type {Holder, HolderGroup, HolderScope}

/** A group as queries report it: the example named, its share of the live heap. */
export function groupBrief(index: HeapIndex, g: HolderGroup, liveBytes: number) {
  const {example, ...rest} = g
  return {...rest, example: objectBrief(index, example), share: liveBytes ? g.retainedBytes / liveBytes : 0}
}

export type GroupBrief = ReturnType<typeof groupBrief>

/** Offsets sampled per group. */
const OFFSET_SAMPLES = 8
/** Anchors named per mapping. */
const ANCHORS = 4
/** Referrers of a top object asked where they point into it. */
const REFERRERS = 16
/**
 * Edges whose offsets are read from the core, in all: typed holders' field offsets (OFFSET_SAMPLES
 * tries a group) and where referrers point into top objects. Past it a top object is held by
 * its first walked referrer, wherever that points (a heap of millions of multiply-held blocks
 * would otherwise cost a read each).
 */
const EDGE_READS = 100_000
/** Root kinds in the order a top object's holder is chosen among its roots: names people know first. */
const ROOT_PREFERENCE: RootRef['kind'][] = ['global', 'stack', 'mapping', 'tls', 'cached-stack', 'register']
const NO_OFFSET = 0xffff_ffff

/**
 * The untyped live objects grouped by size and holder, as analyze found them (storedHolders):
 * `which` picks the groups of the reachable objects, of the leaked ones, or of both.
 */
export function holderGroups(index: HeapIndex, which: HolderScope = 'all'): HolderGroup[] {
  return index.holderTable().groups[which]
}

/** Every untyped live object's holder, from one walk: the holder-name tier (issue 30's tier 5). */
export interface ObjectHolders {
  holders: Holder[]
  /** Per slot: index into holders, −1 for a slot not walked (named, free, TCMalloc's own). */
  holderOf: Int32Array
  /** Per slot: where in the holder its chain starts (NO_OFFSET: not read). */
  entryOffset: Uint32Array
}

/** Every slot's holder as the index keeps it (for a walk over every object: the export). */
export function objectHolders(index: HeapIndex): ObjectHolders {
  return {holders: index.holderTable().holders, holderOf: index.columns.holderOf(), entryOffset: index.columns.holderOffset()}
}

/**
 * The holder name of an untyped object ("app::Inventory+0x40", "g_roots+0x38 (heapdemo)", "thread
 * 12 #3 worker_main"), or null. A holder name says what holds the block, never what it is.
 */
export function holderName(h: ObjectHolders, id: number): string | null {
  const k = h.holderOf[id]!
  return k < 0 ? null : holderLabel(h.holders[k]!, h.entryOffset[id]!)
}

/** holderName for one slot, read from the index alone (find-object). */
export function storedHolderName(index: HeapIndex, slot: number): string | null {
  const held = index.holderOf(slot)
  return held === null ? null : holderLabel(held.holder, held.offset)
}

function holderLabel(holder: Holder, at: number): string {
  const where = at === NO_OFFSET || holder.kind === 'leaked' || holder.kind === 'thread' || holder.kind === 'register' ? '' : `+0x${at.toString(16)}`
  return `${holder.name}${where}${holder.module ? ` (${holder.module})` : ''}`
}

/**
 * The holder walk run once, for the index (analyze, on the index so far): every untyped live
 * object's holder from the walk of all of them, and each scope's groups from a walk of its own
 * (what holderWalk would give a query of that scope). The walks share the columns read and one
 * pair of per-slot arrays (the last walk's, all, is kept); `have` are columns the analysis still
 * holds, the index's own arrays, not read again. `blocks` (analyze under a memory limit): the
 * columns not had are read through caches of blocks of `cacheBytes` each, not whole, so that the
 * walk holds its two outputs (8 bytes a slot) and little else; the same walk, the same results.
 */
export function storedHolders(program: Program, index: HeapIndex, have: Have = {}, blocks?: ThroughBlocks): {holderOf: Int32Array; entryOffset: Uint32Array; table: Uint8Array} {
  const inputs = blocks === undefined ? walkInputs(program, index, have) : walkInputsThroughBlocks(program, index, have, blocks)
  try {
    const perSlot = {holderOf: new Int32Array(inputs.n), entryOffset: new Uint32Array(inputs.n)}
    const reachable = holderWalk(program, index, 'reachable', inputs, perSlot).groups
    const leaked = holderWalk(program, index, 'leaked', inputs, perSlot).groups
    const all = holderWalk(program, index, 'all', inputs, perSlot)
    return {holderOf: all.holderOf, entryOffset: all.entryOffset, table: encodeHolderTable({holders: all.holders, groups: {all: all.groups, reachable, leaked}})}
  } finally {
    inputs.close()
  }
}

/**
 * Bytes a slot storedHolders allocates with its columns whole, given the dominator tree, the
 * retained bytes and the type ids: idom and the retained objects (4 bytes each), the reachable
 * bits (1) and the two outputs (8).
 */
export const WHOLE_WALK_BYTES_PER_SLOT = 17

/** How the walk under a memory limit reads its columns: caches of `cacheBytes` each, of blocks of `blockWords` elements (tests make them small). */
export interface ThroughBlocks {
  cacheBytes: number
  blockWords?: number
}

/** Columns the analysis holds already (the index's own): not read again. */
export type Have = Partial<{childStart: Uint32Array; child: Uint32Array; types: ArrayLike<number>; retainedBytes: ArrayLike<number>}>

/**
 * What every walk reads, by slot (`n` of them), each column through a function: the column's
 * element at a slot (or a place in the child lists). Each function reads one array, whole in
 * memory or through a cache, so that each call in the walk meets one function.
 */
interface WalkInputs {
  n: number
  childStartAt: (i: number) => number
  childAt: (i: number) => number
  idomAt: (i: number) => number
  typeAt: (i: number) => number
  reachableAt: (i: number) => number
  retainedBytesAt: (i: number) => number
  retainedObjectsAt: (i: number) => number
  sizeOf: (i: number) => number
  groupCount: number
  tids: number[]
  names: Names
  edges: EdgesAsked
  close: () => void
}

/** What every walk needs beside the columns. */
const walkContext = (program: Program, index: HeapIndex) => ({groupCount: index.columns.threadGroupCount(), tids: Array.from(index.columns.threadTids()), names: new Names(program, index), edges: new EdgesAsked(index)})

/** What the walks use of an edge index.edgeBetween found: its offset in the source, and whether it points at the target's start. */
interface EdgeAsked {
  offset: number
  atStart: boolean
}

/**
 * index.edgeBetween, each pair read once for the walks that share these inputs: storedHolders'
 * three walks ask the same pairs (the walk of all the objects asks again every pair the reachable
 * and the leaked walks asked), and a read is several ranged reads of the index and a walk of the
 * source's words in the core; a core of many multiply-held objects (an interpreter's) asked
 * hundreds of thousands. A walk reads at most about EDGE_READS pairs, so this holds a few hundred
 * thousand numbers at most (a Map entry each, no object: it stays small under --memory-limit too).
 */
class EdgesAsked {
  /** By pair: -1 when there is no edge, else offset * 2 + 1 when it points at the target's start, offset * 2 when inside. */
  private readonly found = new Map<number, number>()

  constructor(private readonly index: HeapIndex) {}

  between(from: number, to: number): EdgeAsked | undefined {
    // Slots are below 2^32: the pair fits a double exactly.
    const key = from * 2 ** 32 + to
    let code = this.found.get(key)
    if (code === undefined) {
      const e = this.index.edgeBetween(from, to)
      code = e === undefined ? -1 : e.offset * 2 + (e.toOffset === 0 ? 1 : 0)
      this.found.set(key, code)
    }
    return code < 0 ? undefined : {offset: Math.floor(code / 2), atStart: code % 2 === 1}
  }
}

/** The walk's inputs whole in memory: the index's columns (but those given); each slot's size from its span. */
function walkInputs(program: Program, index: HeapIndex, have: Have = {}): WalkInputs {
  const c = index.columns
  const {childStart, child} = have.childStart && have.child ? {childStart: have.childStart, child: have.child} : c.dominatorTree()
  const idom = c.idom()
  const objects = index.objects
  const types = have.types ?? (c.type() as ArrayLike<number>)
  const reachable = c.reachable()
  const retainedBytes = have.retainedBytes ?? c.retainedBytes()
  const retainedObjects = c.retainedObjects()
  return {
    n: idom.length,
    childStartAt: i => childStart[i]!,
    childAt: i => child[i]!,
    idomAt: i => idom[i]!,
    typeAt: i => types[i]!,
    reachableAt: i => reachable[i]!,
    retainedBytesAt: i => retainedBytes[i]!,
    retainedObjectsAt: i => retainedObjects[i]!,
    sizeOf: id => objects.sizeOf(id),
    ...walkContext(program, index),
    close: () => {},
  }
}

/**
 * The walk's inputs under a memory limit: the type ids as given (where the analysis holds them),
 * every other column through a cache of blocks of its own. The walk goes down the
 * dominator tree, whose child lists are ascending (but for each one's largest child, first): a
 * heap's neighbours are met together, and a block read serves many.
 */
function walkInputsThroughBlocks(program: Program, index: HeapIndex, have: Have, {cacheBytes, blockWords}: ThroughBlocks): WalkInputs {
  const b = index.columns.throughBlocks(cacheBytes, blockWords)
  const objects = index.objects
  const types = have.types
  return {
    n: b.idom.length,
    childStartAt: i => b.childStart.at(i),
    childAt: i => b.child.at(i),
    idomAt: i => b.idom.at(i),
    typeAt: types ? i => types[i]! : i => b.type.at(i),
    reachableAt: i => b.reachable.at(i),
    retainedBytesAt: i => b.retainedBytes.at(i),
    retainedObjectsAt: i => b.retainedObjects.at(i),
    sizeOf: id => objects.sizeOf(id),
    ...walkContext(program, index),
    close: () => Object.values(b).forEach(x => x.close()),
  }
}

/**
 * Groups the untyped live objects by size and holder, in walks down the dominator tree (typed
 * arrays, a stack as deep as the tree; no per-object JavaScript object), and names each walked
 * object's holder. `which` picks the reachable objects, the leaked ones, or both. Analyze runs it
 * (storedHolders); queries read what it found (holderGroups).
 */
export function holderWalk(program: Program, index: HeapIndex, which: HolderScope = 'all', inputs: WalkInputs = walkInputs(program, index), perSlot?: Pick<ObjectHolders, 'holderOf' | 'entryOffset'>): {groups: HolderGroup[]} & ObjectHolders {
  const {n, childStartAt, childAt, idomAt, typeAt, reachableAt, retainedBytesAt, retainedObjectsAt, sizeOf, groupCount, tids, names, edges} = inputs
  // Per object walked: the holder it is under (-1: not walked yet) and the offset its chain starts at.
  const holderOfObject = (perSlot?.holderOf ?? new Int32Array(n)).fill(-1)
  const entryOffset = (perSlot?.entryOffset ?? new Uint32Array(n)).fill(NO_OFFSET)

  const holders: Holder[] = []
  const holderByKey = new Map<string, number>()
  const holderOf = (key: string, make: () => Holder) => {
    let h = holderByKey.get(key)
    if (h === undefined) {
      h = holders.length
      holders.push(make())
      holderByKey.set(key, h)
    }
    return h
  }
  const typeHolder = new Int32Array(index.meta.typeNames.length + 1).fill(-1)
  const holderOfType = (t: number) => {
    if (typeHolder[t]! < 0) typeHolder[t] = holderOf(`type:${t}`, () => ({kind: 'type', name: index.typeName(t) ?? '?'}))
    return typeHolder[t]!
  }

  // Group ids by holder and size; per group, its counts and how many nodes of the current path are in it.
  const groupIds: Array<Map<number, number>> = []
  const groups: HolderGroup[] = []
  let active = new Uint32Array(64)
  const groupFor = (holder: number, size: number, id: number, leaked: boolean) => {
    const bySize = (groupIds[holder] ??= new Map())
    let g = bySize.get(size)
    if (g === undefined) {
      g = groups.length
      groups.push({size, holder: holders[holder]!, objects: 0, bytes: 0, retainedBytes: 0, retainedObjects: 0, offsets: [], entries: null, example: id, leaked})
      bySize.set(size, g)
      if (g >= active.length) {
        const grown = new Uint32Array(active.length * 2)
        grown.set(active)
        active = grown
      }
    }
    return g
  }

  // The walk: a stack of (node, next child, its group or -1).
  let cap = 1024
  let node = new Uint32Array(cap)
  let next = new Uint32Array(cap)
  let inGroup = new Int32Array(cap)
  let depth = 0
  const push = (id: number, holder: number, offset: number, leaked: boolean) => {
    if (depth === cap) {
      // A path down a tree of n nodes is n long at most: a longer one goes round a cycle (checked as the stack grows, not each step).
      if (depth > n) throw new DamagedIndexError(index.path, 'the dominator tree has a cycle')
      cap *= 2
      const grow = <T extends Uint32Array | Int32Array>(a: T, make: (k: number) => T) => {
        const b = make(cap)
        b.set(a)
        return b
      }
      node = grow(node, k => new Uint32Array(k))
      next = grow(next, k => new Uint32Array(k))
      inGroup = grow(inGroup, k => new Int32Array(k))
    }
    holderOfObject[id] = holder
    entryOffset[id] = offset
    let g = -1
    if (typeAt(id) === 0) {
      const size = sizeOf(id)
      g = groupFor(holder, size, id, leaked)
      const r = groups[g]!
      r.objects++
      r.bytes += size
      if (active[g] === 0) {
        r.retainedBytes += retainedBytesAt(id)
        r.retainedObjects += retainedObjectsAt(id)
      }
      active[g]!++
      if (offset !== NO_OFFSET && r.offsets.length < OFFSET_SAMPLES && !r.offsets.includes(offset)) r.offsets.push(offset)
    }
    node[depth] = id
    next[depth] = childStartAt(id)
    inGroup[depth] = g
    depth++
  }
  const walk = (top: number, holder: number, offset: number, leaked: boolean) => {
    push(top, holder, offset, leaked)
    while (depth > 0) {
      const at = depth - 1
      const id = node[at]!
      if (next[at]! < childStartAt(id + 1)) {
        const c = childAt(next[at]!++)
        const t = typeAt(id)
        if (t === 0) push(c, holderOfObject[id]!, entryOffset[id]!, leaked)
        else {
          // Under a typed object: held by its type, at the offset of its pointer (read from the core for a sample only).
          const h = holderOfType(t)
          const sampled = typeAt(c) === 0 && (groupIds[h]?.size ?? 0) < 64 && sampledOffsets(h, sizeOf(c)) < OFFSET_SAMPLES
          if (sampled) edgeReads++
          push(c, h, sampled ? (edges.between(id, c)?.offset ?? NO_OFFSET) : NO_OFFSET, leaked)
        }
      } else {
        if (inGroup[at]! >= 0) active[inGroup[at]!]!--
        depth--
      }
    }
  }
  // Offsets read per group (tries, not distinct offsets: a million holders with one field cost OFFSET_SAMPLES reads).
  const tries: number[] = []
  let edgeReads = 0
  const sampledOffsets = (h: number, size: number) => {
    const g = groupIds[h]?.get(size)
    if (g === undefined) return 0
    tries[g] = (tries[g] ?? 0) + 1
    return edgeReads < EDGE_READS ? tries[g]! - 1 : OFFSET_SAMPLES
  }

  // Top objects whose holder is a referrer not walked yet wait for it.
  let waiting: Array<{id: number; thread: number; starts: Array<{from: number; offset: number}>; others: number[]; root: RootRef | undefined}> = []
  // The virtual root's children (read again at each: the walks between read the child lists too).
  for (let k = childStartAt(n), end = childStartAt(n + 1); k < end; k++) {
    const x = childAt(k)
    // TCMalloc's own unreferenced allocations are no group of the program's.
    const reached = reachableAt(x)
    if (reached === ALLOCATOR_INTERNAL) continue
    const leaked = reached === UNREACHED
    if (leaked ? which === 'reachable' : which === 'leaked') continue
    if (leaked) {
      walk(x, holderOf('leaked', () => ({kind: 'leaked', name: 'nothing (a leaked structure)'})), NO_OFFSET, true)
      continue
    }
    const d = idomAt(x)
    const group = d === BY_VIRTUAL_ROOT ? -1 : groupOfIdom(d, n, groupCount)
    const thread = group >= 0 ? tids[group]! : -1
    const roots = index.rootsOf(x)
    const atStart = bestRoot(roots.filter(r => r.toOffset === 0), thread)
    if (atStart) {
      const place = names.rootHolder(atStart)
      walk(x, holderOf(place.key, () => place.holder), place.offset ?? NO_OFFSET, false)
      continue
    }
    // No root holds its start: the referrers that do (an owner), else any root, else any referrer.
    const starts: Array<{from: number; offset: number}> = []
    const others: number[] = []
    for (const r of index.referrerIds(x, REFERRERS)) {
      const e = edgeReads < EDGE_READS ? edges.between(r, x) : undefined
      if (e) edgeReads++
      if (e?.atStart) starts.push({from: r, offset: e.offset})
      else others.push(r)
    }
    waiting.push({id: x, thread, starts, others, root: bestRoot(roots, thread)})
  }
  // Each pass places the waiting objects whose chosen referrer has been walked; what never gets one falls back.
  for (let before = -1; waiting.length > 0; ) {
    const last = waiting.length === before
    before = waiting.length
    const still: typeof waiting = []
    for (const w of waiting) {
      const owner = w.starts.find(s => holderOfObject[s.from]! >= 0)
      if (owner) {
        const t = typeAt(owner.from)
        walk(w.id, t === 0 ? holderOfObject[owner.from]! : holderOfType(t), t === 0 ? entryOffset[owner.from]! : owner.offset, false)
      } else if (w.starts.length === 0 && w.root) {
        const place = names.rootHolder(w.root)
        walk(w.id, holderOf(place.key, () => place.holder), place.offset ?? NO_OFFSET, false)
      } else if (last) {
        const other = w.others.find(r => holderOfObject[r]! >= 0)
        if (other !== undefined && typeAt(other) === 0) walk(w.id, holderOfObject[other]!, entryOffset[other]!, false)
        else if (other !== undefined) walk(w.id, holderOfType(typeAt(other)), NO_OFFSET, false)
        else {
          const tid = w.thread
          const h = holderOf(`thread:${tid}`, () => ({kind: 'thread', name: tid >= 0 ? `thread ${tid} (registers, stack and TLS)` : 'the roots together'}))
          walk(w.id, h, NO_OFFSET, false)
        }
      } else still.push(w)
    }
    waiting = still
  }
  for (const h of holders) if (h.kind === 'mapping') h.anchors = names.anchorsOf(h)
  for (const g of groups) {
    g.offsets.sort((a, b) => a - b)
    g.entries = arrayEntries(g.offsets)
  }
  groups.sort((a, b) => b.retainedBytes - a.retainedBytes || b.bytes - a.bytes || a.size - b.size)
  return {groups, holders, holderOf: holderOfObject, entryOffset}
}

/**
 * Three or more offsets equally spaced by more than a word: a field of an array's entries (the
 * field's offset in an entry). A word apart they may as well be neighbouring fields: not said.
 */
function arrayEntries(offsets: number[]): {stride: number; field: number} | null {
  if (offsets.length < 3) return null
  const stride = offsets[1]! - offsets[0]!
  for (let i = 2; i < offsets.length; i++) if (offsets[i]! - offsets[i - 1]! !== stride) return null
  return stride > 8 ? {stride, field: offsets[0]! % stride} : null
}

/** The root a top object's holder is named by: a global first, the given thread's roots before others'. */
function bestRoot(roots: RootRef[], thread: number | null): RootRef | undefined {
  let best: RootRef | undefined
  const rank = (r: RootRef) => ROOT_PREFERENCE.indexOf(r.kind) * 2 + (thread !== null && r.thread !== thread ? 1 : 0)
  for (const r of roots) if (!best || rank(r) < rank(best)) best = r
  return best
}

/** Names of the places roots lie in, each found once (symbols, frames, regions). */
class Names {
  private readonly frames = new Map<number, ReturnType<typeof unwindThread>['frames']>()
  private readonly regions: RootRegion[]

  constructor(
    private readonly program: Program,
    private readonly index: HeapIndex,
  ) {
    this.regions = index.meta.rootRegions
  }

  /** The holder a root names, its key, and the root's offset in it. */
  rootHolder(r: RootRef): {key: string; holder: Holder; offset?: number} {
    if (r.kind === 'global') {
      const sym = this.program.symbolize(r.address)
      if (sym?.symbol) {
        const start = r.address - sym.offset
        const holder: Holder = {kind: 'global', name: demangle(sym.symbol.name), module: baseName(sym.module.module.path)}
        return {key: `global:${start}`, holder, offset: sym.offset}
      }
      const label = rootRefLabel(this.program, this.index, r)
      return {key: `global:${label}`, holder: {kind: 'global', name: label}}
    }
    if (r.kind === 'stack' && r.thread !== null) {
      const frame = this.frameOf(r.thread, r.address)
      if (frame) {
        const name = `thread ${r.thread} #${frame.level} ${codeLabel(this.program, frame.pc, frame.level === 0).label}`
        return {key: `frame:${r.thread}:${frame.cfa}`, holder: {kind: 'frame', name}, offset: frame.cfa - r.address}
      }
    }
    if (r.kind === 'register') return {key: `register:${r.thread}`, holder: {kind: 'register', name: `thread ${r.thread}'s registers`}}
    const region = regionOf(this.regions, r.address)
    if (region) {
      const kind = r.kind === 'mapping' ? 'mapping' : r.kind === 'tls' ? 'tls' : r.kind === 'cached-stack' ? 'cached-stack' : 'frame'
      return {key: `region:${region.base}:${region.label}`, holder: {kind, name: region.label}, offset: r.address - region.base}
    }
    const label = rootRefLabel(this.program, this.index, r)
    return {key: `root:${label}`, holder: {kind: r.kind === 'mapping' ? 'mapping' : 'global', name: label}}
  }

  private frameOf(tid: number, address: number) {
    let frames = this.frames.get(tid)
    if (!frames) {
      const t = this.program.core.threads.find(x => x.tid === tid)
      frames = t ? unwindThread(this.program, t).frames : []
      this.frames.set(tid, frames)
    }
    return frames.find(f => address >= f.sp - this.program.core.arch.redZone && address < f.cfa)
  }

  /**
   * The globals, stack slots and TLS words that point into a mapping (every root region of those
   * kinds is read word by word): what keeps the mapping's pointers meaningful to the program. Not
   * the heap's blocks: the holder walk runs once per mapping holder inside the analysis, and a
   * scan of every live block each time would cost more than the walk; `toma memory` reads them.
   */
  anchorsOf(h: Holder): string[] {
    const mine = this.regions.filter(x => x.kind === 'mapping' && x.label === h.name)
    if (!mine.length) return []
    const range = {start: Math.min(...mine.map(x => x.base)), end: Math.max(...mine.map(x => x.end))}
    return mappingAnchors(this.program, this.index, [range], ANCHORS, {heapBlocks: false})[0]!.map(anchorText)
  }
}

const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1)
