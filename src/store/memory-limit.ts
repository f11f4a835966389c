import os from 'node:os'

/**
 * How much memory the analysis may hold (`analyze --memory-limit`): the phases whose arrays can
 * live in the index file instead (the reverse edges, built in passes) ask it how much room is left
 * before they allocate, and take the way that fits.
 */
export interface MemoryLimit {
  bytes: number
  /** 'option': the user's; 'default': DEFAULT_SHARE of `available`. */
  from: 'option' | 'default'
  /** Memory available to this process when the limit was set (bytes). */
  available: number
}

/** The default limit's share of the memory available: the rest is the page cache's, which reads the core and the index. */
export const DEFAULT_SHARE = 0.75

/**
 * Memory this process can have without others giving theirs up: the kernel's MemAvailable
 * (`os.freemem()` on Linux), within a cgroup's limit where one applies (less what this process
 * holds already, which the limit counts).
 */
export function availableMemory(): number {
  const free = os.freemem()
  const total = os.totalmem()
  // Without a cgroup limit Node says 2^64 (or a number above the machine's memory).
  const constrained = process.constrainedMemory?.() ?? 0
  if (!(constrained > 0 && constrained < total)) return free
  return Math.max(0, Math.min(free, constrained - process.memoryUsage.rss()))
}

export function defaultMemoryLimit(available = availableMemory()): MemoryLimit {
  return {bytes: Math.floor(available * DEFAULT_SHARE), from: 'default', available}
}

export function memoryLimitOf(bytes: number | undefined): MemoryLimit {
  return bytes === undefined ? defaultMemoryLimit() : {bytes, from: 'option', available: availableMemory()}
}

/**
 * Bytes the process may still allocate under `limit`: the limit less its resident memory now.
 * Resident memory is what the limit bounds (the kernel's peak RSS is what `npm run bench` reports).
 */
export function roomUnder(limit: MemoryLimit): number {
  return limit.bytes - process.memoryUsage.rss()
}

/**
 * What the core's cache of small reads may hold under `limit` (the core reader bounds it at
 * 64 MiB anyway): a thirty-second of it, so 16 MiB under 512 MiB.
 */
export function readCacheBytes(limit: MemoryLimit): number {
  return Math.floor(limit.bytes / 32)
}

/**
 * What each forward edge array's block cache may hold where the limit keeps them in the index
 * (graph/forward-edges.ts): a thirty-second of it, at most 64 MiB, as the core's read cache.
 */
export function edgeCacheBytes(limit: MemoryLimit): number {
  return Math.min(64 * 2 ** 20, readCacheBytes(limit))
}

/** The limit in words, as the analysis prints it at its start. */
export function memoryLimitLine(limit: MemoryLimit): string {
  const said = `memory limit ${memorySize(limit.bytes)}`
  if (limit.from === 'option') return `${said} (--memory-limit)`
  return `${said}: ${Math.round(DEFAULT_SHARE * 100)} % of the ${memorySize(limit.available)} available (--memory-limit sets it)`
}

/** "512 MiB", "11.3 GiB"; a limit under a mebibyte ("1 KiB", "900 bytes") is not rounded to 0 MiB. */
export function memorySize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 2 ** 20) return `${Math.round(bytes / 1024)} KiB`
  const mib = bytes / 2 ** 20
  return mib < 10_240 ? `${Math.round(mib)} MiB` : `${(mib / 1024).toFixed(1)} GiB`
}
