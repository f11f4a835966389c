/** A value handed over once: once taken, the holder no longer keeps it alive. */
export class TakeOnce<T> {
  constructor(private value: T | null) {}

  take(): T | null {
    const value = this.value
    this.value = null
    return value
  }
}
