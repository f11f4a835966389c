import {hex} from '../errors.js'
import {ROOT_KIND_NAMES} from '../graph/csr.js'
import type {HeapIndex, RootRef} from '../index/heap-index.js'
import {DamagedIndexError} from '../index/index-file.js'
import {STATE_NAMES} from '../heap/states.js'
import {publicIdArray} from '../queries/object-ids.js'
import type {TextSink} from './output-stream.js'
import type {Allocation} from '../queries/allocations.js'
import {VIA_DEBUG_INFO, VIA_VTABLE, viaLabel} from '../naming/via.js'
import {holderName, type ObjectHolders} from '../queries/holder-groups.js'

const EDGE_CHUNK = 1 << 20

/**
 * Writes the object graph in the "toma-graph" version 1 contract (shared/reference/export-schema.md)
 * as a stream: objects, then edges, then roots, in bounded chunks. Without `all` only live
 * objects are listed; ids are the public ones (object-ids.ts), the same in every command.
 */
/** Kind names of the contract where toma's own differ (export-schema.md: a writable mapping is `anonymous`). */
const EXPORT_ROOT_KIND: Record<string, string> = {mapping: 'anonymous'}

export async function exportJson(
  index: HeapIndex,
  corePath: string,
  all: boolean,
  out: TextSink,
  /** The core's register names (its architecture's pr_reg order): a register root's address is an index into them. */
  registerNames: readonly string[],
  describeRoot?: (r: RootRef) => {label: string; frame: number | null},
  /** Sampled objects' allocation records by slot: written as the optional `allocation` field. */
  allocations?: Map<number, Allocation>,
  /** Untyped live objects' holders: written as `name` with `via: "holder"` (never as `type`). */
  holders?: ObjectHolders,
): Promise<{objects: number; edges: number; roots: number}> {
  const meta = index.meta
  const state = index.objects.state
  const types = index.columns.type()
  const idOf = publicIdArray(state, all)
  const reachable = index.columns.reachable()
  const retained = index.columns.retainedBytes()
  const idom = index.columns.idom()
  const n = state.length
  let ids = 0
  const header = {
    format: 'toma-graph',
    version: 1,
    core: corePath,
    allocator: {kind: meta.summary.allocator.kind ?? 'gperftools', version: meta.summary.allocator.version, pageSize: meta.summary.allocator.pageSize},
  }
  const vias = index.columns.via()
  // Each name's JSON text once, not once per object: `type` only for exact C/C++ types (a vtable,
  // debug information), `name`/`kind` for every tier's, `via` for how it was known.
  const nameJson = ['', ...meta.typeNames.map((n, k) => `,"name":${JSON.stringify(n)},"kind":${JSON.stringify(meta.typeKinds[k] ?? null)}`)]
  const exactJson = ['null', ...meta.typeNames.map(n => JSON.stringify(n))]
  const namedJson = (id: number): string => {
    const t = types[id]!
    const via = vias[id]!
    if (t === 0) {
      const held = state[id] === 0 && holders ? holderName(holders, id) : null
      return held === null ? ',"type":null' : `,"type":null,"name":${JSON.stringify(`held by ${held}`)},"kind":"holder","via":"holder"`
    }
    return `,"type":${via === VIA_VTABLE || via === VIA_DEBUG_INFO ? exactJson[t] : 'null'}${nameJson[t]},"via":"${viaLabel(via)}"`
  }
  await out.write(JSON.stringify(header).slice(0, -1) + ',\n"objects":[')
  let first = true
  // Objects in id order: the live ones, then (with --all) the others (publicIdArray's rule).
  for (const live of all ? [true, false] : [true]) {
    for (const c = index.objects.cursor(); c.next(); ) {
      const i = c.index
      if (idOf[i]! < 0 || (state[i] === 0) !== live) continue
      ids++
      // Live objects say why they are held: reachable, retained bytes, immediate dominator.
      const d = idom[i]!
      const held = state[i] === 0 ? `,"reachable":${reachable[i] === 1},"retained":${retained[i]},"dominator":${d < n ? idOf[d] : null}` : ''
      const allocation = allocations?.get(i)
      const sampled = allocation ? `,"allocation":${allocationJson(allocation)}` : ''
      const pending = out.write(
        `${first ? '\n' : ',\n'}{"id":${idOf[i]},"address":"${hex(c.start)}","size":${c.size},"state":"${STATE_NAMES[state[i]!]}","sizeClass":${index.spanSizeClass[c.span]!}${namedJson(i)}${held}${sampled}}`,
      )
      if (pending) await pending
      first = false
    }
  }
  await out.write('\n],\n"edges":[')
  const outStart = index.columns.outStart()
  const edgeCount = index.columns.edgeCount()
  // Where each pointer lies is found again in the core, object by object in address order, in
  // reads of 1 MiB (past the core's block cache, which would only fill with bytes read once).
  const offsets = index.edgeOffsets(1 << 20)
  first = true
  let to: Uint32Array = new Uint32Array(0)
  let toStart = 0
  for (let from = 0; from < n; from++) {
    const a = outStart[from]!
    const b = outStart[from + 1]!
    if (!(a <= b && b <= edgeCount)) throw new DamagedIndexError(index.path, `object ${from} has a bad edge list`)
    if (a === b || idOf[from]! < 0) continue
    // The targets in chunks of EDGE_CHUNK edges (or the object's, if more).
    if (b > toStart + to.length) {
      toStart = a
      to = index.columns.edgeTargets(a, Math.max(EDGE_CHUNK, b - a))
    }
    const at = a - toStart
    const {offset, toOffset} = offsets.allEdges(from, to, at, b - a)
    for (let j = 0; j < b - a; j++) {
      const target = to[at + j]!
      if (idOf[target]! < 0) continue
      const pending = out.write(`${first ? '\n' : ',\n'}{"from":${idOf[from]},"to":${idOf[target]},"offset":${offset[j]},"toOffset":${toOffset[j]}}`)
      if (pending) await pending
      first = false
    }
  }
  await out.write('\n],\n"roots":[')
  const {kind, thread, address, to: rootTo, toOffset: rootToOffset} = index.rootTable()
  first = true
  let roots = 0
  for (let r = 0; r < kind.length; r++) {
    if (idOf[rootTo[r]!]! < 0) continue
    const k = ROOT_KIND_NAMES[kind[r]!]!
    const where = k === 'register' ? `"address":null,"register":"${registerNames[address[r]!]}"` : `"address":"${hex(address[r]!)}"`
    const d = describeRoot?.({kind: k, thread: thread[r]! >= 0 ? thread[r]! : null, address: address[r]!, to: rootTo[r]!, toOffset: rootToOffset[r]!})
    const described = d ? `,"label":${JSON.stringify(d.label)}${d.frame === null ? '' : `,"frame":${d.frame}`}` : ''
    await out.write(`${first ? '\n' : ',\n'}{"kind":"${EXPORT_ROOT_KIND[k] ?? k}","thread":${thread[r]! >= 0 ? thread[r] : null},${where},"to":${idOf[rootTo[r]!]},"toOffset":${rootToOffset[r]}${described}}`)
    first = false
    roots++
  }
  await out.write('\n]}\n')
  return {objects: ids, edges: edgeCount, roots}
}

/**
 * A sampled object's record in the contract's shape (export-schema.md, "Additions"): the bytes
 * requested, the return addresses innermost first, and each one's name (its address where no
 * module names it).
 */
function allocationJson(a: Allocation): string {
  return JSON.stringify({requested: a.requestedSize, stack: a.stack.map(f => f.address), frames: a.stack.map(f => f.symbol ?? f.address)})
}
