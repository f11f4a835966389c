import type {AddressSpace} from '../../core/address-space.js'

/** _gc_prev keeps two flag bits (collecting, finalized) below the pointer. */
function prevPointer(word: number): number {
  return word - (word % 4)
}

/**
 * Whether the two words at `head` are a PyGC_Head (Include/internal/pycore_gc.h) outside a
 * collection: untracked (_gc_next 0, _gc_prev at most its FINALIZED flag), or linked both ways
 * into a generation's doubly-linked list (the next head's prev and the prev head's next are this
 * head). A GC object's reading of a block needs it; two arbitrary words rarely are.
 */
export function isGcHead(memory: AddressSpace, head: number): boolean {
  const next = memory.readU64(head)
  const prevWord = memory.readU64(head + 8)
  if (next === undefined || prevWord === undefined) return false
  if (next === 0) return prevWord <= 1
  if (next % 8 !== 0) return false
  const prev = prevPointer(prevWord)
  if (prev === 0 || prev % 8 !== 0) return false
  const nextsPrev = memory.readU64(next + 8)
  return nextsPrev !== undefined && prevPointer(nextsPrev) === head && memory.readU64(prev) === head
}
