import type {NamingContext} from '../recogniser.js'
import {ROOT_CACHED_STACK, ROOT_STACK} from '../../graph/csr.js'
import type {Probe} from './probe.js'
import {forEachOwnerWord} from './owner-words.js'

/**
 * Stale vectors on stacks. A live frame keeps the words of its dead temporaries and moved-from
 * locals (-O2 reuses and never clears slots: a `std::vector` swapped with an empty one leaves its
 * {begin, end, capacity end} in the temporary's slot), and where TCMalloc gave the freed body to a
 * new block the stale triple reads as a vector over it (workloaddemo: a `std::vector<Entry*>`'s
 * 1 KiB body, freed, then a session's `char[988]` payload). The vector's shape cannot tell them
 * apart; ownership can: a live local vector's body is its owner's alone, and no heap object points
 * at its start, while a reused block's new owner, when it is a heap object, does. So a vector read
 * from a stack names its body only when no heap object's word points at the body's start (a struct
 * keeping a local vector's data() is rare: refusing it costs a name, never gives a wrong one).
 */
export class StackVectors {
  /** Where the stack root ranges start (the probe's ownerStart while they are read). */
  private readonly stackStarts = new Set<number>()
  /** The live blocks some stack word starts: the only ones the objects' words are looked up for. */
  private readonly onStacks = new Set<number>()
  /** Of those, the ones a heap object's word points at. */
  private readonly heapHeld = new Set<number>()

  /** Reads the stacks (small beside the heap) for the blocks their words start. */
  constructor(ctx: NamingContext, p: Probe) {
    const stacks = ctx.roots.filter(r => r.kind === ROOT_STACK || r.kind === ROOT_CACHED_STACK)
    for (const r of stacks) this.stackStarts.add(Math.ceil(r.start / 8) * 8)
    forEachOwnerWord(ctx, p, (_a, w) => {
      if (p.liveSlot(w) !== undefined) this.onStacks.add(w)
    }, stacks)
  }

  /** Called for every owner word of the main read: notes a heap object's word at such a block. */
  see(word: number, inObject: boolean): void {
    if (inObject && this.onStacks.size > 0 && this.onStacks.has(word)) this.heapHeld.add(word)
  }

  /** Whether a vector read at an owner starting at ownerStart may not name the block at `word`. */
  refuses(ownerStart: number, word: number): boolean {
    return this.stackStarts.has(ownerStart) && this.heapHeld.has(word)
  }
}
