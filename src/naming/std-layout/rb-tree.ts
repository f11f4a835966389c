import type {ObjectRef} from '../../tcmalloc/heap-objects.js'
import {MAX_ELEMENTS, type Probe} from './probe.js'

const RED = 0
const BLACK = 1

/**
 * A libstdc++ `std::map`/`std::set` (any `_Rb_tree`) whose root node is `root`, found at
 * `owner` = its header's parent field. The header (`_Rb_tree_header`, in the owner) is {colour,
 * parent = root, left = leftmost, right = rightmost} followed by the node count; each node is
 * {colour, parent, left, right, value}, one block each. Proven by: the root's parent is the
 * header, the header is red and the root black, every node is a live unnamed block of one size,
 * coloured red or black with no red child under a red node, every child's parent is the node it
 * hangs from, the leftmost and rightmost nodes are the header's, and the nodes number the
 * header's count. Other red-black trees with this exact header (Boost.Intrusive's rbtree with a
 * size) link their hooks inside objects, not one block per node at its start.
 */
export function rbTreeAt(p: Probe, owner: number, root: ObjectRef): boolean {
  const header = owner - 8
  // The comparator (8 bytes at least) comes before the header, the node count after it.
  if (!p.holds(header - 8, owner + 32)) return false
  // The owner's words first (they reject almost every pointer without a read of the heap).
  if (p.u32(header) !== RED) return false
  const leftmost = p.word(owner + 8)
  const rightmost = p.word(owner + 16)
  const count = p.word(owner + 24)
  if (count === undefined || !(count >= 1 && count <= MAX_ELEMENTS)) return false
  if (!p.block(leftmost) && leftmost !== root.start) return false
  if (!p.block(rightmost) && rightmost !== root.start) return false
  if (p.word(root.start + 8) !== header || p.u32(root.start) !== BLACK) return false
  const nodes: ObjectRef[] = [root]
  const stack = [root.start]
  while (stack.length > 0) {
    const n = stack.pop()!
    const colour = p.u32(n)
    const left = p.word(n + 16)
    const right = p.word(n + 24)
    if (colour === undefined || left === undefined || right === undefined) return false
    for (const child of [left, right]) {
      if (child === 0) continue
      if (nodes.length >= count) return false
      const c = p.block(child)
      if (!c || c.size !== root.size || p.word(child + 8) !== n) return false
      const childColour = p.u32(child)
      if (childColour !== RED && childColour !== BLACK) return false
      if (colour === RED && childColour === RED) return false
      nodes.push(c)
      stack.push(child)
    }
  }
  if (nodes.length !== count) return false
  if (extreme(p, root.start, 16) !== leftmost || extreme(p, root.start, 24) !== rightmost) return false
  for (const n of nodes) p.name(n, 'std::map/set node')
  return true
}

/** The node reached by following one link (left at +16, right at +24) from a proven tree's root. */
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
