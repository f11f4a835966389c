/** Whether a flag word (below 2^53) has a one-bit flag set: arithmetic, as JS bit operators cut at 32 bits. */
export function hasFlag(word: number, bit: number): boolean {
  return Math.floor(word / bit) % 2 === 1
}
