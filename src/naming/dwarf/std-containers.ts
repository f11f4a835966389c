import {hex} from '../../errors.js'
import {sizeOf, stripAliases, type DwarfType, type StructType} from '../../elf/dwarf/types.js'
import type {Offer} from './claims.js'
import {MAX_ELEMENTS, type ContainerFlow} from './container-flow.js'
import type {SlotRounds} from './slot-rounds.js'
import {readSorted} from './sorted-read.js'

/** Scans a container value of type `t` at `addr`: names its heap parts, flows its element type on. */
export type Container = (flow: ContainerFlow, addr: number, t: StructType) => void

/**
 * The libstdc++ containers this tier names the parts of, by their DWARF type: `std::vector<T>`
 * bodies, `std::string` buffers, `std::map`/`std::set` (and multi-) nodes, `std::list` nodes,
 * `std::unordered_map`/`set` (and multi-) bucket arrays and nodes.
 * Their member names (`_M_impl`, `_M_start`, `_M_header`, …) are libstdc++'s; a type without them
 * (another library, another version) is not a container here and is followed member by member.
 */
export const containerOf = perType((t: StructType): Container | null => {
  const n = t.name
  if (n.startsWith('std::vector<')) return vector
  if (n.startsWith('std::__cxx11::basic_string<')) return string
  if (n.startsWith('std::map<') || n.startsWith('std::multimap<') || n.startsWith('std::set<') || n.startsWith('std::multiset<')) return rbTree
  if (n.startsWith('std::__cxx11::list<')) return list
  if (/^std::unordered_(multi)?(map|set)</.test(n)) return hashtable
  return null
})

/**
 * `compute` once per type: a container's reader runs for every container the flow meets (two
 * million on workloaddemo's timing core), and finding its members by name each time took a
 * second of the naming worker's CPU.
 */
function perType<L>(compute: (t: StructType) => L | null): (t: StructType) => L | null {
  const known = new WeakMap<StructType, L | null>()
  return t => {
    let got = known.get(t)
    if (got === undefined) known.set(t, (got = compute(t)))
    return got
  }
}

/** A field found by its path of member names, through base classes and unnamed members. */
interface Field {
  offset: number
  type: DwarfType
}

export function fieldAt(t: DwarfType, path: readonly string[]): Field | null {
  let offset = 0
  let cur: DwarfType = t
  for (const name of path) {
    const found = member(stripAliases(cur), name, 0)
    if (!found) return null
    offset += found.offset
    cur = found.type
  }
  return {offset, type: cur}
}

function member(t: DwarfType, name: string, depth: number): Field | null {
  if (t.kind !== 'struct' || depth > 16) return null
  for (const m of t.members) if (m.name === name) return m
  for (const m of [...t.bases, ...t.members.filter(x => x.name === '')]) {
    const inner = member(stripAliases(m.type), name, depth + 1)
    if (inner) return {offset: m.offset + inner.offset, type: inner.type}
  }
  return null
}

function word(flow: ContainerFlow, addr: number): number | undefined {
  return flow.ctx.program.core.memory.readU64(addr)
}

/** `std::vector<T>`: [_M_start, _M_end_of_storage) is one block, _M_finish inside it. */
const vectorLayout = perType(t => {
  const elem = t.params.get('_Tp')
  const start = fieldAt(t, ['_M_impl', '_M_start'])
  const finish = fieldAt(t, ['_M_impl', '_M_finish'])
  const eos = fieldAt(t, ['_M_impl', '_M_end_of_storage'])
  if (!elem || !start || !finish || !eos) return null
  const element = stripAliases(elem)
  return {elem, size: sizeOf(elem), startAt: start.offset, finishAt: finish.offset, eosAt: eos.offset, body: {name: `std::vector<${element.name}> body`, kind: 'std::vector body', struct: null, element: element.kind === 'struct' ? element.name : null}}
})

const vector: Container = (flow, addr, t) => {
  const v = vectorLayout(t)
  if (!v) return
  const size = v.size
  const b = word(flow, addr + v.startAt)
  const f = word(flow, addr + v.finishAt)
  const e = word(flow, addr + v.eosAt)
  if (!b || f === undefined || e === undefined || size <= 0) return
  if (!(b <= f && f <= e) || (f - b) % size !== 0) {
    flow.ctx.warn(`std::vector at ${hex(addr)}: begin ${hex(b)}, end ${hex(f)}, capacity end ${hex(e)} do not agree: its body is not named`, addr)
    return
  }
  if (!flow.live(b) || flow.block.start !== b || e - b > flow.block.size) return
  const body = flow.block.index
  if (!flow.claims.claim(body, b, v.body)) return
  if (!flow.hasPointers(v.elem)) return
  const n = Math.min((f - b) / size, MAX_ELEMENTS)
  if (n > 0) flow.later(b, v.elem, body, n)
}

/** `std::string` (C++11 ABI): a buffer outside the object when longer than its local 15 bytes. */
const stringLayout = perType(t => {
  const ch = t.params.get('_CharT')
  const p = fieldAt(t, ['_M_dataplus', '_M_p'])
  const len = fieldAt(t, ['_M_string_length'])
  const cap = fieldAt(t, ['_M_allocated_capacity'])
  const local = fieldAt(t, ['_M_local_buf'])
  if (!ch || sizeOf(ch) !== 1 || !p || !len || !cap || !local) return null
  return {pAt: p.offset, lengthAt: len.offset, capacityAt: cap.offset, localAt: local.offset}
})

const string: Container = (flow, addr, t) => {
  const s = stringLayout(t)
  if (!s) return
  const buf = word(flow, addr + s.pAt)
  const length = word(flow, addr + s.lengthAt)
  if (!buf || length === undefined || buf === addr + s.localAt) return
  const capacity = word(flow, addr + s.capacityAt)
  if (!flow.live(buf) || flow.block.start !== buf || capacity === undefined || length > capacity || capacity + 1 > flow.block.size) return
  // The buffer's terminating NUL, one byte in a block the flow reads nothing else of: read after
  // the round, in address order with the other strings' (stringBuffers).
  flow.endsString(buf + length, flow.block.index, buf)
}

const STRING_BUFFER = {name: 'std::string buffer', kind: 'std::string buffer', struct: null, element: null}

/**
 * The strings' buffers whose ends the round met (`ends`: each NUL's address, its block's start, its
 * slot), named where that byte is a NUL, read in address order: read as the flow met them, one
 * read of the file each (600,000 on workloaddemo's timing core), they were a fifth of its time.
 */
export function stringBuffers(flow: ContainerFlow, ends: SlotRounds<number>, byte: Buffer): void {
  const memory = flow.ctx.program.core.memory
  ends.round((nulAt, start, _count, slot, next) => {
    if (readSorted(memory, nulAt, 1, byte, next) && byte[0] === 0) flow.claims.claim(slot, start, STRING_BUFFER)
    return true
  })
}

/** Links of libstdc++'s `_Rb_tree_node_base` and `_List_node_base`, by member name. */
function linkOffsets(base: DwarfType | undefined, names: readonly string[]): number[] | null {
  if (!base) return null
  const out: number[] = []
  for (const n of names) {
    const f = fieldAt(base, [n])
    if (!f) return null
    out.push(f.offset)
  }
  return out
}

/**
 * `std::map`/`set` (and multi-): a red-black tree whose header is in the object. Every node is
 * checked before any is named: a live block's start, big enough for a node, its parent link
 * pointing back, and as many nodes as _M_node_count says.
 */
const rbTreeLayout = perType(t => {
  const tree = fieldAt(t, ['_M_t'])
  const header = fieldAt(t, ['_M_t', '_M_impl', '_M_header'])
  const count = fieldAt(t, ['_M_t', '_M_impl', '_M_node_count'])
  const val = tree && stripAliases(tree.type).kind === 'struct' ? (stripAliases(tree.type) as StructType).params.get('_Val') : undefined
  const links = linkOffsets(header?.type, ['_M_parent', '_M_left', '_M_right'])
  const container = containerName(t)
  if (!header || !count || !val || !links || !container) return null
  const [parentAt, leftAt, rightAt] = links as [number, number, number]
  const nodeBase = stripAliases(header.type)
  const valueAt = nodeBase.kind === 'struct' ? nodeBase.size : 32
  const node = {name: `${container} node`, kind: 'std::map/set node', struct: null, element: null}
  return {headerAt: header.offset, countAt: count.offset, val, parentAt, leftAt, rightAt, valueAt, nodeSize: valueAt + sizeOf(val), family: t.name.slice(0, t.name.indexOf('<')), node}
})

const rbTree: Container = (flow, addr, t) => {
  const r = rbTreeLayout(t)
  if (!r) return
  const {parentAt, leftAt, rightAt, valueAt} = r
  const h = addr + r.headerAt
  const n = word(flow, addr + r.countAt)
  const root = word(flow, h + parentAt)
  if (n === undefined || root === undefined || n > MAX_ELEMENTS) return
  const nodes = new Nodes()
  // The nodes still to visit, each with the parent its link must name.
  const stack: number[] = root ? [root, h] : []
  while (stack.length > 0) {
    const parent = stack.pop()!
    const node = stack.pop()!
    if (nodes.count >= n || !nodes.addLive(flow, node, r.nodeSize) || word(flow, node + parentAt) !== parent) {
      flow.ctx.warn(`${r.family} at ${hex(addr)}: node ${hex(node)} is not a node of its tree (${n} nodes): no node of it is named`, addr)
      return
    }
    const l = word(flow, node + leftAt)
    const rr = word(flow, node + rightAt)
    if (l === undefined || rr === undefined) return
    if (l) stack.push(l, node)
    if (rr) stack.push(rr, node)
  }
  if (nodes.count !== n) {
    flow.ctx.warn(`${r.family} at ${hex(addr)}: ${nodes.count} nodes reached, its count says ${n}: no node of it is named`, addr)
    return
  }
  nodes.claim(flow, r.node, flow.hasPointers(r.val) ? r.val : null, valueAt)
}

/** `std::list<T>`: a ring of nodes through the header in the object, as long as _M_size says. */
const listLayout = perType(t => {
  const elem = t.params.get('_Tp')
  const header = fieldAt(t, ['_M_impl', '_M_node'])
  const size = fieldAt(t, ['_M_impl', '_M_node', '_M_size'])
  const links = linkOffsets(header?.type, ['_M_next', '_M_prev'])
  if (!elem || !header || !size || !links) return null
  const [nextAt, prevAt] = links as [number, number]
  // The node is _List_node_base (two links) then the value.
  const valueAt = 16
  const node = {name: `std::list<${stripAliases(elem).name}> node`, kind: 'std::list node', struct: null, element: null}
  return {elem, headerAt: header.offset, sizeAt: size.offset, nextAt, prevAt, valueAt, nodeSize: valueAt + sizeOf(elem), node}
})

const list: Container = (flow, addr, t) => {
  const l = listLayout(t)
  if (!l) return
  const {nextAt, prevAt} = l
  const h = addr + l.headerAt
  const n = word(flow, addr + l.sizeAt)
  if (n === undefined || n > MAX_ELEMENTS) return
  const nodes = new Nodes()
  let prev = h
  let node = word(flow, h + nextAt)
  while (node !== undefined && node !== h) {
    if (nodes.count >= n || !nodes.addLive(flow, node, l.nodeSize) || word(flow, node + prevAt) !== prev) {
      flow.ctx.warn(`std::list at ${hex(addr)}: node ${hex(node)} is not a node of its ring (${n} nodes): no node of it is named`, addr)
      return
    }
    prev = node
    node = word(flow, node + nextAt)
  }
  if (node !== h || nodes.count !== n) return
  nodes.claim(flow, l.node, flow.hasPointers(l.elem) ? l.elem : null, l.valueAt)
}

/** `std::map<int, Item*>`-style names of a container's parts: its family and its key (and mapped) type. */
function containerName(t: StructType): string | null {
  const family = t.name.slice(0, t.name.indexOf('<'))
  const key = t.params.get('_Key')
  if (!key) return null
  if (!family.endsWith('map')) return `${family}<${stripAliases(key).name}>`
  const mapped = t.params.get('_Tp')
  return mapped ? `${family}<${stripAliases(key).name}, ${stripAliases(mapped).name}>` : null
}

/**
 * `std::unordered_map`/`set` (and multi-): a bucket array (unless the table uses the one bucket
 * inside the object) and a singly linked list of nodes from `_M_before_begin`, as long as
 * `_M_element_count` says. Each node is a `_Hash_node_base` link, then the value (then, for some
 * hashes, the cached hash code). Every node is checked before any is named.
 */
const hashtableLayout = perType(t => {
  const table = fieldAt(t, ['_M_h'])
  const bucketsAt = fieldAt(t, ['_M_h', '_M_buckets'])
  const countAt = fieldAt(t, ['_M_h', '_M_bucket_count'])
  const firstAt = fieldAt(t, ['_M_h', '_M_before_begin', '_M_nxt'])
  const elementsAt = fieldAt(t, ['_M_h', '_M_element_count'])
  const singleAt = fieldAt(t, ['_M_h', '_M_single_bucket'])
  const tableType = table && stripAliases(table.type)
  const val = tableType?.kind === 'struct' ? tableType.params.get('_Value') : undefined
  const name = containerName(t)
  if (!bucketsAt || !countAt || !firstAt || !elementsAt || !singleAt || !val || !name) return null
  const valueAt = 8
  const buckets = {name: `${name} buckets`, kind: 'std::unordered buckets', struct: null, element: null}
  const node = {name: `${name} node`, kind: 'std::unordered node', struct: null, element: null}
  return {name, val, bucketsAt: bucketsAt.offset, countAt: countAt.offset, firstAt: firstAt.offset, elementsAt: elementsAt.offset, singleAt: singleAt.offset, valueAt, nodeSize: valueAt + sizeOf(val), buckets, node}
})

const hashtable: Container = (flow, addr, t) => {
  const h = hashtableLayout(t)
  if (!h) return
  const buckets = word(flow, addr + h.bucketsAt)
  const count = word(flow, addr + h.countAt)
  const n = word(flow, addr + h.elementsAt)
  if (!buckets || !count || n === undefined || n > MAX_ELEMENTS) return
  if (buckets !== addr + h.singleAt) {
    if (!flow.live(buckets) || flow.block.start !== buckets || count * 8 > flow.block.size) return
    flow.claims.claim(flow.block.index, buckets, h.buckets)
  }
  const nodes = new Nodes()
  let node = word(flow, addr + h.firstAt)
  while (node) {
    if (nodes.count >= n || !nodes.addLive(flow, node, h.nodeSize)) {
      flow.ctx.warn(`${h.name} at ${hex(addr)}: node ${hex(node)} is not a node of its list (${n} elements): no node of it is named`, addr)
      return
    }
    node = word(flow, node)
  }
  if (node !== 0 || nodes.count !== n) return
  nodes.claim(flow, h.node, flow.hasPointers(h.val) ? h.val : null, h.valueAt)
}

/** A container's nodes, checked one by one before any is named: their slots and starts. */
class Nodes {
  private readonly index: number[] = []
  private readonly start: number[] = []

  get count(): number {
    return this.index.length
  }

  /** Adds the node at `node` if a live block of at least `size` bytes starts there; else false. */
  addLive(flow: ContainerFlow, node: number, size: number): boolean {
    if (!flow.live(node) || flow.block.start !== node || flow.block.size < size) return false
    this.index.push(flow.block.index)
    this.start.push(node)
    return true
  }

  /** Names every node `offer`, and scans the value at `valueAt` in each as `value` (unless null). */
  claim(flow: ContainerFlow, offer: Offer, value: DwarfType | null, valueAt: number): void {
    for (let i = 0; i < this.index.length; i++) {
      if (flow.claims.claim(this.index[i]!, this.start[i]!, offer) && value !== null) flow.later(this.start[i]! + valueAt, value, this.index[i]!)
    }
  }
}
