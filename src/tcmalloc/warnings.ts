/** A structure in the core that is not as TCMalloc would have left it; analysis went on without it. */
export interface HeapWarning {
  kind: string
  message: string
  /** The addresses involved (the structure, the bad pointer, ...). */
  addresses: number[]
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

  get total(): number {
    let n = 0
    for (const c of this.counts.values()) n += c
    return n
  }
}
