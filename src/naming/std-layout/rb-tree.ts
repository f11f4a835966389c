import {MAX_ELEMENTS, type Block, type Probe} from './probe.js'

const NODE = 'std::map/set node'
const RED = 0
const BLACK = 1

/** Where a red-black tree node keeps its links and colour (0 red, 1 black in both libraries). */
interface NodeLayout {
  left: number
  right: number
  parent: number
  colour: number
  /** libstdc++'s colour is an enum (4 bytes), libc++'s a bool (1 byte, then padding). */
  colourBytes: 4 | 1
}

/** libstdc++'s `_Rb_tree_node_base`: {colour, parent, left, right}. */
const LIBSTDCXX: NodeLayout = {colour: 0, parent: 8, left: 16, right: 24, colourBytes: 4}
/** libc++'s `__tree_node_base`: {left, right, parent, is_black}. */
const LIBCXX: NodeLayout = {left: 0, right: 8, parent: 16, colour: 24, colourBytes: 1}

/**
 * A libstdc++ `std::map`/`std::set` (any `_Rb_tree`) whose root node is `root`, found at
 * `owner` = its header's parent field. The header (`_Rb_tree_header`, in the owner) is {colour,
 * parent = root, left = leftmost, right = rightmost} followed by the node count; each node is
 * {colour, parent, left, right, value}, one block each. Proven by: the header is red, its
 * leftmost and rightmost are the tree's, the root's parent is the header, and the tree walk
 * (`treeNodes`) agrees with the count.
 */
export function rbTreeAt(p: Probe, owner: number, root: Block): boolean {
  const header = owner - 8
  // The comparator (8 bytes at least) comes before the header, the node count after it.
  if (!p.holds(header - 8, owner + 32)) return false
  // The owner's words first (they reject almost every pointer without a read of the heap).
  if (p.u32(header) !== RED) return false
  const leftmost = p.word(owner + 8)
  const rightmost = p.word(owner + 16)
  const count = p.word(owner + 24)
  if (count === undefined || !(count >= 1 && count <= MAX_ELEMENTS)) return false
  if (!p.block(leftmost, NODE) || !p.block(rightmost, NODE)) return false
  if (p.word(root.start + LIBSTDCXX.parent) !== header) return false
  const nodes = treeNodes(p, root, count, LIBSTDCXX)
  if (!nodes || extreme(p, root.start, LIBSTDCXX.left) !== leftmost || extreme(p, root.start, LIBSTDCXX.right) !== rightmost) return false
  for (const n of nodes) p.name(n, NODE)
  return true
}

/**
 * A libc++ `std::map`/`std::set` (`__tree`) whose root is `root`, found at `owner` = its end
 * node's left field: {begin node (leftmost), end node {left = root}, size}; each node is {left,
 * right, parent, is_black, value}, one block each. Proven by: the begin node is a block, the
 * root's parent is the end node, and the tree walk agrees with the size and the begin node.
 */
export function libcxxTreeAt(p: Probe, owner: number, root: Block): boolean {
  if (!p.holds(owner - 8, owner + 16)) return false
  const leftmost = p.word(owner - 8)
  const count = p.word(owner + 8)
  if (count === undefined || !(count >= 1 && count <= MAX_ELEMENTS)) return false
  if (!p.block(leftmost, NODE)) return false
  if (p.word(root.start + LIBCXX.parent) !== owner) return false
  const nodes = treeNodes(p, root, count, LIBCXX)
  if (!nodes || extreme(p, root.start, LIBCXX.left) !== leftmost) return false
  for (const n of nodes) p.name(n, NODE)
  return true
}

/**
 * The nodes of a red-black tree from its root, or null: every node a live unnamed block of the
 * root's size, the root black, each node red or black with no red child under a red node, every
 * child's parent the node it hangs from, and exactly `count` nodes.
 */
function treeNodes(p: Probe, root: Block, count: number, l: NodeLayout): Block[] | null {
  const colourOf = (n: number) => (l.colourBytes === 4 ? p.u32(n + l.colour) : p.ctx.program.core.memory.readU8(n + l.colour))
  if (colourOf(root.start) !== BLACK) return null
  const nodes: Block[] = [root]
  const stack = [root.start]
  while (stack.length > 0) {
    const n = stack.pop()!
    const colour = colourOf(n)
    const left = p.word(n + l.left)
    const right = p.word(n + l.right)
    if (colour === undefined || left === undefined || right === undefined) return null
    for (const child of [left, right]) {
      if (child === 0) continue
      if (nodes.length >= count) return null
      const c = p.block(child, NODE)
      if (!c || c.size !== root.size || p.word(child + l.parent) !== n) return null
      const childColour = colourOf(child)
      if (childColour !== RED && childColour !== BLACK) return null
      if (colour === RED && childColour === RED) return null
      nodes.push(c)
      stack.push(child)
    }
  }
  return nodes.length === count ? nodes : null
}

/** The node reached by following one link from a proven tree's root. */
function extreme(p: Probe, root: number, link: number): number | undefined {
  let n = root
  for (let i = 0; i < MAX_ELEMENTS; i++) {
    const next = p.word(n + link)
    if (next === undefined) return undefined
    if (next === 0) return n
    n = next
  }
  return undefined
}
