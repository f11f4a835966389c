import {MAX_ELEMENTS, type Block, type Probe} from './probe.js'

/** libstdc++'s smallest map (`_S_initial_map_size`). */
const INITIAL_MAP_SIZE = 8

/**
 * A libstdc++ `std::deque` at `owner`: {map, map size, start {cur, first, last, node}, finish
 * {cur, first, last, node}}. The map is one block of `map size` pointers; the nodes from
 * start.node to finish.node point at the element blocks, each of last − first bytes. Proven by:
 * map size ≥ 8 and map size × 8 a request that rounds to the map's block; both iterators' nodes
 * inside the map, in order; each iterator's first is its node's word and its cur in [first,
 * last); every block a live unnamed block of one size for the same last − first request.
 */
export function dequeAt(p: Probe, owner: number, map: Block): boolean {
  if (!p.holds(owner, owner + 80)) return false
  const mapSize = p.word(owner + 8)
  if (mapSize === undefined || !(mapSize >= INITIAL_MAP_SIZE && mapSize <= MAX_ELEMENTS)) return false
  if (!p.fits(mapSize * 8, map)) return false
  const start = iterator(p, owner + 16)
  const finish = iterator(p, owner + 48)
  if (!start || !finish) return false
  const blockBytes = start.last - start.first
  if (finish.last - finish.first !== blockBytes) return false
  const mapEnd = map.start + mapSize * 8
  for (const it of [start, finish]) {
    if (!(it.node >= map.start && it.node < mapEnd && it.node % 8 === 0)) return false
    if (p.word(it.node) !== it.first) return false
  }
  if (start.node > finish.node) return false
  const blocks: Block[] = []
  for (let node = start.node; node <= finish.node; node += 8) {
    const b = p.block(p.word(node), 'std::deque block')
    if (!b || !p.fits(blockBytes, b) || (blocks.length > 0 && b.size !== blocks[0]!.size)) return false
    blocks.push(b)
  }
  p.name(map, 'std::deque map')
  for (const b of blocks) p.name(b, 'std::deque block')
  return true
}

interface DequeIterator {
  cur: number
  first: number
  last: number
  node: number
}

function iterator(p: Probe, at: number): DequeIterator | null {
  const cur = p.word(at)
  const first = p.word(at + 8)
  const last = p.word(at + 16)
  const node = p.word(at + 24)
  if (cur === undefined || first === undefined || last === undefined || node === undefined) return null
  if (!(first <= cur && cur < last)) return null
  return {cur, first, last, node}
}
