/** A structure in the core that is not as TCMalloc would have left it; analysis went on without it. */
export interface HeapWarning {
  kind: string
  message: string
  /** The addresses involved (the structure, the bad pointer, ...). */
  addresses: number[]
}

const KEEP = 1000

/** Collects warnings, keeping the first KEEP of them and counting the rest by kind. */
export class Warnings {
  readonly list: HeapWarning[] = []
  readonly counts = new Map<string, number>()

  add(kind: string, message: string, ...addresses: number[]): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1)
    if (this.list.length < KEEP) this.list.push({kind, message, addresses})
  }

  get total(): number {
    let n = 0
    for (const c of this.counts.values()) n += c
    return n
  }
}
