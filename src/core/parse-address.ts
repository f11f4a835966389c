import {TomaError} from '../errors.js'
import {USER_SPACE_END} from './address-space.js'

/** Parses a user-given address (0x… hex, or decimal) exactly, as a number below 2^47. */
export function parseAddress(text: string): number {
  const t = text.trim().toLowerCase()
  const hex = t.startsWith('0x')
  const digits = hex ? t.slice(2) : t
  if (!(hex ? /^[0-9a-f]{1,16}$/ : /^[0-9]{1,20}$/).test(digits)) throw new TomaError(`${text}: not an address (expected 0x… hex or decimal)`)
  // BigInt, exact however many digits; the digits are checked above, so it cannot throw.
  const value = BigInt(hex ? `0x${digits}` : digits)
  if (value >= BigInt(USER_SPACE_END)) {
    throw new TomaError(`${text}: beyond user space (0x${value.toString(16)} ≥ 0x${USER_SPACE_END.toString(16)})`)
  }
  return Number(value)
}
