/** Bytes read from the core at once: a run of neighbouring spans, or a slice of a large one. */
export const CHUNK = 16 * 1024 * 1024

/**
 * A read buffer of CHUNK bytes, its own ArrayBuffer at offset 0 (so a Uint32Array view is
 * aligned). One per thread, reused for every range: a fresh 16 MiB each time costs page faults.
 */
export function scanBuffer(): Buffer {
  return Buffer.allocUnsafeSlow(CHUNK)
}
