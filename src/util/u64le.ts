/**
 * The unsigned 64-bit little-endian word at `at` as a number: exact below 2^53 (every user-space
 * address and every real size is); above that it rounds, so a caller that must tell every bit
 * (a poisoned link, a counter) checks `Number.isSafeInteger` or reads a bigint instead.
 * Two 32-bit halves rather than `readBigUInt64LE`: no bigint is made on the hot paths that read
 * every word of a stack or a block.
 */
export function u64le(bytes: Buffer, at: number): number {
  return bytes.readUInt32LE(at) + bytes.readUInt32LE(at + 4) * 0x1_0000_0000
}
