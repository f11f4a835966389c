import {spawn, type ChildProcess} from 'node:child_process'
import {TomaError} from '../errors.js'

/**
 * `toma analyze` runs itself again, once, with glibc's malloc tuned for what it allocates: a few
 * dozen typed arrays of hundreds of MB, each written once from start to end.
 * - `glibc.malloc.hugetlb=1`: malloc asks for transparent huge pages (madvise) on what it maps,
 *   so a fresh array costs one page fault per 2 MiB instead of one per 4 KiB. On the benchmark VM a
 *   fault costs about 11 µs and the analysis of the scale-24 core took 630 k of them (BENCHMARKS.md).
 * - `glibc.malloc.mmap_threshold=131072`: fixed, so every block of 128 KiB or more is its own
 *   mapping, returned to the system when it is freed. By default the threshold grows with the
 *   largest block freed, after which smaller blocks (the scan's 256 KiB edge blocks) come from
 *   malloc's heaps, where freed memory can stay resident: with huge pages alone, the peak memory
 *   at scale 24 was 400 MB higher in some runs than in others; with both settings it was steady.
 * A process reads GLIBC_TUNABLES only when it starts, hence the second process. A user's own
 * GLIBC_TUNABLES that sets either key is left as it is (no second process); other keys of theirs
 * are kept after these. TOMA_MALLOC=system runs the analysis in the first process, malloc as it is.
 */
export const MALLOC_TUNABLES = 'glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=131072'

/** Set in the second process: the first one's pid (so it neither runs a third nor outlives the first). */
const TUNED_BY = 'TOMA_MALLOC_TUNED_BY'

/** The environment to run the analysis again in, or null to run it in this process. */
export function tunedMallocEnvironment(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, pid = process.pid): NodeJS.ProcessEnv | null {
  if (platform !== 'linux' || env[TUNED_BY] !== undefined || env.TOMA_MALLOC === 'system') return null
  const own = env.GLIBC_TUNABLES ?? ''
  if (/(^|:)glibc\.malloc\.(hugetlb|mmap_threshold)=/.test(own)) return null
  return {...env, GLIBC_TUNABLES: own === '' ? MALLOC_TUNABLES : `${MALLOC_TUNABLES}:${own}`, [TUNED_BY]: String(pid)}
}

/** The GLIBC_TUNABLES this process runs with when it is the second process of a tuned run, else null. */
export function mallocTunablesInEffect(env = process.env): string | null {
  return env[TUNED_BY] !== undefined ? (env.GLIBC_TUNABLES ?? null) : null
}

/**
 * Runs `script args` again with `env` under this process's Node and options, passing on the
 * terminal and the signals a user or a supervisor sends; exits as the child does. Returns only if
 * the child could not be started (the caller then runs the command itself).
 */
export function runAgain(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise(resolve => {
    // The handlers come first: once the child exists, a signal must not end this process by its
    // default action and leave the child running unseen.
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']
    let child: ChildProcess | undefined
    const forward = (signal: NodeJS.Signals): void => {
      child?.kill(signal)
    }
    for (const s of signals) process.on(s, forward)
    const stopForwarding = (): void => {
      for (const s of signals) process.off(s, forward)
    }
    child = spawn(process.execPath, [...process.execArgv, script, ...args], {stdio: 'inherit', env})
    child.on('error', () => {
      stopForwarding()
      resolve()
    })
    child.on('exit', (code, signal) => {
      stopForwarding()
      // Ended by a signal: this process ends by the same one, as a shell expects.
      if (signal) process.kill(process.pid, signal)
      else process.exit(code ?? 1)
    })
  })
}

/**
 * In the second process: `update` (the analysis's progress callback, called between its steps)
 * made to abandon the analysis once the first process is gone (killed with SIGKILL, which it
 * cannot pass on), so that no analysis runs on unseen and writes an index after its user quit.
 */
export function abandonedWithoutParent<A extends unknown[]>(update: (...a: A) => void, env = process.env): (...a: A) => void {
  const parent = Number(env[TUNED_BY])
  if (!Number.isInteger(parent) || parent <= 0) return update
  return (...a: A) => {
    if (process.ppid !== parent) throw new TomaError('the toma process that started this analysis is gone: analysis abandoned')
    update(...a)
  }
}
