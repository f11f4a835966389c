import {MAX_ELEMENTS, type Block, type Probe} from './probe.js'

const NODE = 'std::list node'

/**
 * A libstdc++ `std::list` (C++11 ABI) at `owner`: its sentinel {next = first, prev = last, size}
 * and nodes {next, prev, value}, one block each. Proven by: following next from the sentinel
 * through exactly `size` live unnamed blocks of one size, each node's prev is the one before it,
 * and the last node's next is the sentinel, whose prev is that last node.
 *
 * A hand-written circular doubly-linked list with a head {next, prev} and its length after it,
 * whose nodes are blocks with the links first, has this shape: its nodes are list nodes in all but
 * the class name, and accepted. Intrusive lists (links inside larger objects, at another offset)
 * fail: their next pointers are not block starts.
 */
export function listAt(p: Probe, owner: number, firstNode: Block): boolean {
  if (!p.holds(owner, owner + 24)) return false
  const last = p.word(owner + 8)
  const size = p.word(owner + 16)
  if (size === undefined || !(size >= 1 && size <= MAX_ELEMENTS)) return false
  if (last !== firstNode.start && !p.block(last, NODE)) return false
  const nodes: Block[] = []
  let prev = owner
  let at: number | undefined = firstNode.start
  for (let i = 0; i < size; i++) {
    const n = p.block(at, NODE)
    if (!n || n.size !== firstNode.size || p.word(n.start + 8) !== prev) return false
    nodes.push(n)
    prev = n.start
    at = p.word(n.start)
  }
  if (at !== owner || prev !== last) return false
  for (const n of nodes) p.name(n, NODE)
  return true
}
