// Start-up cost of a toma call: the median wall time of whole runs of bare Node, `toma --version`
// and one query answered from an existing index (issue 13: a query at most 120 ms). Used by
// tools/bench/bench.ts; `node dist/tools/bench/startup-time.js CORE ADDRESS` measures alone.
import {spawnSync, type SpawnSyncOptionsWithStringEncoding} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {isMain, root} from '../project-root.js'

const BIN = path.join(root, 'bin/run.js')

/** spawnSync's options, and `quiet`: the run must print nothing on stderr. */
export type RunOptions = Omit<SpawnSyncOptionsWithStringEncoding, 'encoding'> & {quiet?: boolean}

/**
 * The median wall time in ms of `runs` runs of `node ...args`. Each must exit 0; with `quiet`,
 * also print nothing on stderr (a query that had to analyse first says so there: not start-up).
 */
export function medianRunMs(args: string[], runs = 10, options: RunOptions = {}): number {
  return medianRun(args, runs, options).wallMs
}

/**
 * The median wall time and the median CPU time (user + system, null where the kernel does not
 * say) in ms of `runs` runs of `node ...args`. On a loaded machine wall times stretch with the
 * load; the CPU a run costs does not.
 */
export function medianRun(args: string[], runs = 10, {quiet = false, ...options}: RunOptions = {}): {wallMs: number; cpuMs: number | null} {
  const times: number[] = []
  const cpus: number[] = []
  for (let i = 0; i < runs; i++) {
    const cpu0 = childrenCpuMs()
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, {encoding: 'utf8', ...options})
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    const cpu1 = childrenCpuMs()
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
    if (quiet && r.stderr) throw new Error(`node ${args.join(' ')} printed on stderr: ${r.stderr}`)
    times.push(ms)
    if (cpu0 !== null && cpu1 !== null) cpus.push(cpu1 - cpu0)
  }
  return {wallMs: median(times), cpuMs: cpus.length === runs ? median(cpus) : null}
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return Math.round(sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2)
}

/** CPU time of this process's waited-for children so far (Linux: cutime + cstime of /proc/self/stat, in clock ticks of 10 ms), or null. */
function childrenCpuMs(): number | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    // Fields after the command name (which may hold spaces) start at the state, field 3; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return null
  }
}

/** Median wall and CPU times of bare Node, `toma --version`, and `toma find-object ADDRESS CORE` (its index must exist). */
export function startupTimes(core: string, address: string, runs = 10) {
  const node = medianRun(['-e', '0'], runs)
  const version = medianRun([BIN, '--version'], runs)
  const findObject = medianRun([BIN, 'find-object', address, core], runs, {quiet: true})
  return {
    runs,
    nodeMs: node.wallMs,
    versionMs: version.wallMs,
    findObjectMs: findObject.wallMs,
    nodeCpuMs: node.cpuMs,
    versionCpuMs: version.cpuMs,
    findObjectCpuMs: findObject.cpuMs,
    /** The machine's 1-minute load average when the runs ended: wall times stretch with it. */
    load: Math.round(os.loadavg()[0] * 10) / 10,
  }
}

if (isMain(import.meta.url)) {
  const [core, address, runs] = process.argv.slice(2)
  if (!core || !address) {
    console.error('usage: node dist/tools/bench/startup-time.js CORE ADDRESS [RUNS] (the core analysed already)')
    process.exit(2)
  }
  console.log(JSON.stringify(startupTimes(core, address, Number(runs ?? 10))))
}
