import {TomaError} from '../errors.js'

/** Units of a size: SI prefixes are powers of 1000 (10MB = 10 000 000), IEC ones powers of 1024 (1GiB). */
const UNITS: Record<string, number> = {
  '': 1, b: 1,
  k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12,
  kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
}

export const SIZE_FORMS = 'bytes, or with a unit: 10MB (10^6), 1.5GiB (2^30), kB KiB MB MiB GB GiB TB TiB'

/**
 * A user-given size in bytes: `1048576`, `10MB`, `1.5 GiB`, `512KiB` (a whole number of bytes).
 * `what` and `forms` say what was asked for, in the error (parseMemorySize's own).
 */
export function parseSize(text: string, what = 'a size', forms = SIZE_FORMS): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined
  if (!m || unit === undefined) throw new TomaError(`${text}: not ${what} (${forms})`)
  const bytes = Number(m[1]) * unit
  if (!Number.isSafeInteger(Math.round(bytes))) throw new TomaError(`${text}: too large a size`)
  return Math.round(bytes)
}

/** A memory size's forms: a single-letter unit means powers of 1024 there, as docker, systemd and the JVM read it. */
export const MEMORY_SIZE_FORMS = 'bytes, or with a unit: 512M or 512MiB (2^20), 2G or 2GiB (2^30), 500MB (10^6), 2GB (10^9)'

/** A memory size in bytes: as parseSize, but a single-letter unit (512M, 2G) is a power of 1024. */
export function parseMemorySize(text: string): number {
  const binary = /^\s*(\d+(?:\.\d+)?)\s*([kmgt])\s*$/i.exec(text)
  return parseSize(binary ? `${binary[1]}${binary[2]}iB` : text, 'a memory size', MEMORY_SIZE_FORMS)
}
