/**
 * Typed arrays over SharedArrayBuffer: the graph arrays a worker thread reads while the main
 * thread goes on (the dominator pass) are allocated shared from the start, so handing them over
 * costs neither a copy nor the memory of one.
 */

export function sharedUint32(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(length * 4))
}

/** A new Uint32Array, over shared memory when `shared`. */
export function newUint32(length: number, shared: boolean): Uint32Array {
  return shared ? sharedUint32(length) : new Uint32Array(length)
}

export function sharedFloat64(length: number): Float64Array {
  return new Float64Array(new SharedArrayBuffer(length * 8))
}

export function sharedUint16(length: number): Uint16Array {
  return new Uint16Array(new SharedArrayBuffer(length * 2))
}

export function sharedUint8(length: number): Uint8Array {
  return new Uint8Array(new SharedArrayBuffer(length))
}

/** A shared copy of an array (for small ones, or one whose owner goes on changing it). */
export function sharedCopy<T extends Uint8Array | Uint16Array | Uint32Array | Int32Array>(a: T): T {
  const Ctor = a.constructor as new (buffer: SharedArrayBuffer) => T
  const copy = new Ctor(new SharedArrayBuffer(a.byteLength))
  copy.set(a)
  return copy
}

export function isShared(a: ArrayBufferView): boolean {
  return a.buffer instanceof SharedArrayBuffer
}
