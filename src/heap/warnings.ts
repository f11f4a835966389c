/** A structure in the core that is not as the allocator would have left it; analysis went on without it. */
export interface HeapWarning {
  kind: string
  message: string
  /** The addresses involved (the structure, the bad pointer, ...). */
  addresses: number[]
  /** Why the structure may have been mid-update when the core was taken (a thread inside it, its lock held): set after the walks. */
  inFlight?: string
  /** A bad link or what follows from it: damage, never a structure caught in flight. */
  damage?: true
}

/** Warnings kept per kind: the rest are counted, so one flood cannot hide the other kinds. */
const KEEP = 1000

/** Collects warnings, keeping the first KEEP of each kind and counting every one by kind. */
export class Warnings {
  readonly list: HeapWarning[] = []
  readonly counts = new Map<string, number>()

  add(kind: string, message: string, ...addresses: number[]): void {
    const n = (this.counts.get(kind) ?? 0) + 1
    this.counts.set(kind, n)
    if (n <= KEEP) this.list.push({kind, message, addresses})
  }

  /** A warning about damage (a bad link, or a count that disagrees because of one): never marked as in flight. */
  addDamage(kind: string, message: string, ...addresses: number[]): void {
    this.add(kind, message, ...addresses)
    const last = this.list[this.list.length - 1]
    if (last?.message === message) last.damage = true
  }

  /**
   * Adds another collection's warnings after these, as if each had been added here in its order
   * (those it dropped past KEEP would be dropped here too, so only their counts are carried).
   * Parallel work collects warnings per piece and merges them in the pieces' order.
   */
  merge(other: Pick<Warnings, 'list' | 'counts'>): void {
    const kept = new Map<string, number>()
    for (const w of other.list) {
      this.add(w.kind, w.message, ...w.addresses)
      kept.set(w.kind, (kept.get(w.kind) ?? 0) + 1)
    }
    for (const [kind, n] of other.counts) {
      const rest = n - (kept.get(kind) ?? 0)
      if (rest > 0) this.counts.set(kind, (this.counts.get(kind) ?? 0) + rest)
    }
  }

  get total(): number {
    let n = 0
    for (const c of this.counts.values()) n += c
    return n
  }
}
