/**
 * Owner words kept for a later test, in the order they were met: each word's address and its
 * owner's bounds, in one growing Float64Array (24 bytes a word), up to `capacity` words.
 */
export class OwnerWords {
  private words = new Float64Array(3 * 1024)
  private count = 0

  constructor(private readonly capacity: number) {}

  /** Whether `capacity` words are kept: no more are taken. */
  get full(): boolean {
    return this.count >= this.capacity
  }

  add(address: number, ownerStart: number, ownerEnd: number): void {
    if (this.full) throw new Error('OwnerWords: full')
    if (3 * this.count === this.words.length) {
      const grown = new Float64Array(Math.min(2 * this.words.length, 3 * this.capacity))
      grown.set(this.words)
      this.words = grown
    }
    const at = 3 * this.count++
    this.words[at] = address
    this.words[at + 1] = ownerStart
    this.words[at + 2] = ownerEnd
  }

  forEach(visit: (address: number, ownerStart: number, ownerEnd: number) => void): void {
    for (let i = 0; i < this.count; i++) visit(this.words[3 * i]!, this.words[3 * i + 1]!, this.words[3 * i + 2]!)
  }
}
