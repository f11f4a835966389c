import {MAX_ELEMENTS, type Block, type Probe} from './probe.js'
import {u64le} from '../../util/u64le.js'

/**
 * A libstdc++ `std::unordered_map`/`set` (`_Hashtable`): {buckets, bucket count, before-begin
 * (the first node), element count, rehash policy {max load factor (float), next resize}, single
 * bucket}. Nodes are {next, value[, cached hash]}, one block each, chained from before-begin;
 * every non-empty bucket points at the node before its first one, or at before-begin. With one
 * bucket the bucket array is the owner's own single-bucket word.
 *
 * `bucketsAt`: the word at `owner` points at a bucket array. `singleBucketAt`: the word at
 * `owner` is before-begin and points at the first node of a table with its single bucket.
 *
 * Proven by: the chain from before-begin runs through exactly `element count` live unnamed
 * blocks of one size and ends in null; the bucket count × 8 is a request that rounds to the
 * array's block; every bucket is null, before-begin or one of the nodes; before-begin is in
 * exactly one bucket when there are nodes; the max load factor is a positive finite float.
 */
/** sizeof(_Hashtable) with its single bucket. */
const HASHTABLE_BYTES = 56

export function bucketsAt(p: Probe, owner: number, buckets: Block): boolean {
  if (!p.holds(owner, owner + HASHTABLE_BYTES)) return false
  const bucketCount = p.word(owner + 8)
  if (bucketCount === undefined || !(bucketCount >= 1 && bucketCount <= MAX_ELEMENTS)) return false
  if (!p.fits(bucketCount * 8, buckets)) return false
  const nodes = chain(p, owner)
  if (!nodes) return false
  const words = p.ctx.program.core.memory.readBytes(buckets.start, bucketCount * 8)
  if (!words) return false
  const nodeStarts = new Set(nodes.map(n => n.start))
  const beforeBegin = owner + 16
  let beforeBeginSeen = 0
  for (let i = 0; i < bucketCount; i++) {
    const b = u64le(words, i * 8)
    if (b === beforeBegin) beforeBeginSeen++
    else if (b !== 0 && !nodeStarts.has(b)) return false
  }
  if (beforeBeginSeen !== (nodes.length > 0 ? 1 : 0)) return false
  p.name(buckets, 'std::unordered buckets')
  for (const n of nodes) p.name(n, 'std::unordered node')
  return true
}

export function singleBucketAt(p: Probe, beforeBegin: number, first: Block): boolean {
  const owner = beforeBegin - 16
  if (!p.holds(owner, owner + HASHTABLE_BYTES)) return false
  if (p.word(owner) !== owner + 48 || p.word(owner + 8) !== 1) return false
  if (p.word(beforeBegin) !== first.start) return false
  const nodes = chain(p, owner)
  if (!nodes || nodes.length === 0) return false
  // The single bucket holds before-begin once there is a node.
  if (p.word(owner + 48) !== beforeBegin) return false
  for (const n of nodes) p.name(n, 'std::unordered node')
  return true
}

/** The max load factor's bits read as the float they are. */
const FLOAT_BITS = new Uint32Array(1)
const FLOAT = new Float32Array(FLOAT_BITS.buffer)

/** The nodes chained from before-begin, when they are exactly the element count; else null. */
function chain(p: Probe, owner: number): Block[] | null {
  const count = p.word(owner + 24)
  const policy = p.u32(owner + 32)
  if (count === undefined || policy === undefined || !(count <= MAX_ELEMENTS)) return null
  FLOAT_BITS[0] = policy
  const maxLoad = FLOAT[0]!
  if (!(Number.isFinite(maxLoad) && maxLoad > 0)) return null
  const nodes: Block[] = []
  let at = p.word(owner + 16)
  for (let i = 0; i < count; i++) {
    const n = p.block(at, 'std::unordered node')
    if (!n || (nodes.length > 0 && n.size !== nodes[0]!.size)) return null
    nodes.push(n)
    at = p.word(n.start)
  }
  return at === 0 ? nodes : null
}
