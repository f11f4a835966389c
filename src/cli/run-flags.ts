import * as Flags from './flags.js'
import {DEFAULT_SHARE, memorySize, memoryLimitOf, type MemoryLimit} from '../store/memory-limit.js'
import {MEMORY_SIZE_FORMS, parseMemorySize} from './parse-size.js'

/**
 * The flags that say how an analysis runs, not what it finds: with any of them the index is the
 * same byte for byte, so the index does not record them and a query given other ones does not
 * analyse again. `analyze` takes them, and so does every query, for the analysis it runs when it
 * finds no index (or one of other inputs): a multi-gigabyte core needs its limit there too.
 * `when` starts each description ('' for analyze).
 */
export function runFlags(when = '') {
  return {
    workers: Flags.integer({
      min: 1,
      description: `${when}threads to use (default: every core available): the naming tiers take one, the scan and the reverse edges the rest; 1 runs every phase on one thread, with the same index`,
    }),
    'memory-limit': Flags.string({
      description: `${when}what the analysis may hold in memory (default: ${Math.round(DEFAULT_SHARE * 100)} % of the memory available, printed at the start on a terminal): the phases that can keep to it take the way that fits (the reverse edges in passes into the index, the retained sizes once idom is written, no thread beside the main one), with the same index; a run that held more says so; ${MEMORY_SIZE_FORMS}`,
    }),
  }
}

/** What the run flags given say (a bad size is the command's one-line error, before any work). */
export function runFlagValues(flags: Record<string, unknown>): {workers: number | undefined; memoryLimit: MemoryLimit} {
  const text = flags['memory-limit']
  return {
    workers: typeof flags.workers === 'number' ? flags.workers : undefined,
    memoryLimit: memoryLimitOf(typeof text === 'string' ? parseMemorySize(text) : undefined),
  }
}

/**
 * Said when the run held more than its limit: not every phase keeps to one yet (docs/ARCHITECTURE.md,
 * "Memory policy"), and a user who set one must know it did not hold.
 */
export function limitPassed(m: MemoryLimit): string | null {
  const peak = process.resourceUsage().maxRSS * 1024
  if (peak <= m.bytes) return null
  return `held ${memorySize(peak)} at most, above its ${memorySize(m.bytes)} memory limit: the heap model, the object scan's edges, the dominator pass's forest and the retained sizes take what they need whatever the limit`
}
