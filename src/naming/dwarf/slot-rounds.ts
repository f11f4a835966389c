/** Items sorted at once: the sort key is slot · ROUND_CHUNK + the item's place in the chunk, below 2^53 for any slot below 2^32. */
const ROUND_CHUNK = 2 ** 21

/**
 * The type flow's work list, taken in rounds in address order: what is pending when a round starts
 * is visited by heap slot (slots are numbered in address order), and what the visits add waits for
 * the next round. The flow reads each value it visits from the core; taken as pointers led
 * (depth first), its reads went from block to block across the whole heap, and the read cache
 * read each 16 KiB block of workloaddemo's timing core about three times. Within a slot, items
 * keep the order they were added.
 */
export class SlotRounds<T> {
  private addr: number[] = []
  private type: T[] = []
  private slot: number[] = []
  private count: number[] = []

  /** A value of `type` at `addr` in heap slot `slot` (or `count` of them, one after another), to visit. */
  push(addr: number, type: T, slot: number, count = 1): void {
    this.addr.push(addr)
    this.type.push(type)
    this.slot.push(slot)
    this.count.push(count)
  }

  get pending(): number {
    return this.addr.length
  }

  /**
   * Visits the pending items in slot order (items added meanwhile wait for the next round), each
   * with the address of the item visited after it (Infinity for the last), for a reader that reads
   * through its cache only where the next read is near. Returns false where `visit` did, which
   * stops the round there.
   */
  round(visit: (addr: number, type: T, count: number, slot: number, next: number) => boolean): boolean {
    const {addr, type, slot, count} = this
    this.addr = []
    this.type = []
    this.slot = []
    this.count = []
    for (let from = 0; from < addr.length; from += ROUND_CHUNK) {
      const n = Math.min(ROUND_CHUNK, addr.length - from)
      const keys = new Float64Array(n)
      for (let i = 0; i < n; i++) keys[i] = slot[from + i]! * ROUND_CHUNK + i
      // A typed array's own sort, without a comparator: numeric, and several times faster.
      keys.sort()
      let i = from + (keys[0]! % ROUND_CHUNK)
      for (let k = 0; k < n; k++) {
        const j = k + 1 < n ? from + (keys[k + 1]! % ROUND_CHUNK) : -1
        if (!visit(addr[i]!, type[i]!, count[i]!, slot[i]!, j < 0 ? Infinity : addr[j]!)) return false
        i = j
      }
    }
    return true
  }
}
