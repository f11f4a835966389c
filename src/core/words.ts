import type {AddressSpace} from './address-space.js'

/**
 * The 64-bit word at `at`, in hex, exactly: every bit as the core holds it. A word read as a
 * number is exact only below 2^53 (every user-space address is), so a value that is not known to
 * be an address or a small count (a poisoned link, a counter, a stray word) is shown from here,
 * never from that number (0x636172542d580a0d is not 0x636172542d580c00).
 */
export function hexWord(memory: AddressSpace, at: number): string {
  const w = memory.readU64Big(at)
  return w === undefined ? '(not in core)' : `0x${w.toString(16)}`
}

/**
 * A size_t counter at `at` as a number, exactly: one that went below zero (a block freed twice
 * subtracts its bytes twice) wraps past 2^63 and is read as the negative number it stands for,
 * never as a double rounded near 2^64.
 */
export function readCounter(memory: AddressSpace, at: number): number | undefined {
  const w = memory.readU64Big(at)
  return w === undefined ? undefined : Number(BigInt.asIntN(64, w))
}
