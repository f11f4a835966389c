// Start-up cost of a toma call: the median wall time of whole runs of bare Node, `toma --version`
// and one query answered from an existing index (issue 13: a query at most 120 ms). Used by
// scripts/bench.js; `node scripts/startup-time.js CORE ADDRESS` measures alone.
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/run.js')

/**
 * The median wall time in ms of `runs` runs of `node ...args`. Each must exit 0; with `quiet`,
 * also print nothing on stderr (a query that had to analyse first says so there: not start-up).
 */
export function medianRunMs(args, runs = 10, {quiet = false, ...options} = {}) {
  const times = []
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, {encoding: 'utf8', ...options})
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
    if (quiet && r.stderr) throw new Error(`node ${args.join(' ')} printed on stderr: ${r.stderr}`)
    times.push(ms)
  }
  times.sort((a, b) => a - b)
  const mid = times.length >> 1
  return Math.round(times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2)
}

/** Median wall times of bare Node, `toma --version`, and `toma find-object ADDRESS CORE` (its index must exist). */
export function startupTimes(core, address, runs = 10) {
  return {
    runs,
    nodeMs: medianRunMs(['-e', '0'], runs),
    versionMs: medianRunMs([BIN, '--version'], runs),
    findObjectMs: medianRunMs([BIN, 'find-object', address, core], runs, {quiet: true}),
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [core, address, runs] = process.argv.slice(2)
  if (!core || !address) {
    console.error('usage: node scripts/startup-time.js CORE ADDRESS [RUNS] (the core analysed already)')
    process.exit(2)
  }
  console.log(JSON.stringify(startupTimes(core, address, Number(runs ?? 10))))
}
