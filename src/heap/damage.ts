/**
 * What the allocator's own structures show was broken: each finding names the structure by its
 * address, the word where the bad value was found and that value exactly. The model keeps
 * walking what can still be trusted; the analysis adds who did it where the layout tells.
 */
export type DamageKind =
  /** A free object's link (or a list's head) holds a value that is no object of the heap. */
  | 'overwritten-link'
  /** A link leads into a span of another size class, a free span, or the middle of an object. */
  | 'link-into-other-span'
  /** An entry that is no object's start, whose own word links on to the intact rest of the list (freed through an interior pointer). */
  | 'entry-not-object-start'
  /** An object reached twice: on two lists, or twice on one (a double free). */
  | 'on-a-list-twice'
  /** A list head whose links do not agree (doubly linked lists caught mid-update, or damaged). */
  | 'half-linked-list'
  /** A structure's own counters that cannot all be true (a page heap's free bytes past its system bytes). */
  | 'counter-disagrees'

export interface DamageFinding {
  kind: DamageKind
  /** The list or structure, in words ("thread cache 0x… class 5 list"). */
  structure: string
  /** The structure's address (the FreeList, span record, transfer slot or list head). */
  structureAddress: number
  /** The size class of the list's objects (0: not a class's list). */
  sizeClass: number
  /** The thread whose thread cache holds the list, when it is one and its thread is known. */
  tid: number | null
  /** Where the bad value was read: a free object's link word, or the structure's head field. */
  slot: number
  /** The value found there in hex: the whole 64-bit word, or the field where the structure's entries are narrower (google/tcmalloc's 16-bit span list indices). */
  value: string
  /** The free object whose link word `slot` is (0 when `slot` is the structure's own field). */
  entry: number
  /** The address the bad value names, as far as it is an address (0 when it is none). */
  target: number
  /**
   * The span whose own free list this is, by its first object's address, where the allocator keeps
   * a span's free objects inside the span (google/tcmalloc): the damage was done there, so a culprit
   * is searched for in it alone, and the value is the list's narrow index, no object's first word.
   */
  span?: number
  /** For an object reached twice: where it was reached first, when the structure tells (a per-CPU slab's other slot holding it). */
  reachedFirstAt?: number
  /** Objects the list's own count puts past the bad link, not reached: free, but which ones cannot be told (−1: the list keeps no count). */
  objectsBehind: number
  /** How many of them were found again by their own links (list-tail.ts) and counted free; the rest are counted live. */
  recovered: number
  /** A state no update passes through (a counter below zero): damage, whatever lock was held. */
  impossible?: true
  /** Their bytes (objectsBehind × the class's size). */
  bytesBehind: number
  message: string
}

/** Findings kept: past this they are only counted. */
const KEEP = 10_000

export class DamageLog {
  readonly findings: DamageFinding[] = []
  count = 0
  /** Lost tails searched for so far (free-list-walk.ts bounds them). */
  tailSearches = 0

  add(finding: DamageFinding): void {
    if (++this.count <= KEEP) this.findings.push(finding)
  }
}
