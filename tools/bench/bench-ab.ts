// Alternating A/B runs of the analysis: two builds (each a checkout with its dist built, e.g. a
// `git worktree` of an older commit after `npm run build`) analyse the same core one after the
// other, N pairs, each in a fresh process with the tunables `toma analyze` runs with (through
// each checkout's bench-run: dist/tools/bench/bench-run.js, or scripts/bench-run.js in a checkout
// from before the tools moved). On a shared VM whose speed drifts, pairs run back to back
// compare where two bench sections minutes apart do not.
//   node dist/tools/bench/bench-ab.js CORE CHECKOUT_A CHECKOUT_B [--pairs N]
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {tunedMallocEnvironment} from '../../src/cli/malloc-tuning.js'
import type {AnalyzeStep} from './bench-run.js'

const [core, a = '', b = ''] = process.argv.slice(2)
const pairsAt = process.argv.indexOf('--pairs')
const pairs = pairsAt > 0 ? Number(process.argv[pairsAt + 1]) : 4
const runner = (checkout: string) => {
  const now = path.join(path.resolve(checkout), 'dist/tools/bench/bench-run.js')
  return fs.existsSync(now) ? now : path.join(path.resolve(checkout), 'scripts/bench-run.js')
}
if (!core || !fs.existsSync(core) || !b || ![a, b].every(c => fs.existsSync(runner(c)))) {
  console.error('usage: node dist/tools/bench/bench-ab.js CORE CHECKOUT_A CHECKOUT_B [--pairs N]')
  process.exit(2)
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toma-ab-'))
// Malloc tuned as `toma analyze` runs (src/cli/malloc-tuning.ts), unless TOMA_MALLOC=system says otherwise.
const env = tunedMallocEnvironment(process.env) ?? process.env
const results: Record<string, AnalyzeStep[]> = {[a]: [], [b]: []}
try {
  for (let i = 0; i < pairs; i++) {
    for (const checkout of [a, b]) {
      const index = path.join(dir, 'index')
      const out: AnalyzeStep = JSON.parse(execFileSync(process.execPath, [runner(checkout), 'analyze', core, index], {env, encoding: 'utf8'}))
      fs.rmSync(index, {force: true})
      const phases: Record<string, number> = {}
      for (const p of out.phases) phases[p.phase] = (phases[p.phase] ?? 0) + p.ms
      results[checkout]!.push(out)
      console.log(`${checkout.padEnd(24)} ${String(out.totalMs).padStart(6)} ms  peak ${out.maxRssMiB} MiB  scan ${phases['scan objects']} ms, reverse ${phases['reverse edges']}, dominators (copy) ${phases['dominators (copy)']}, (rest) ${phases['dominators (rest)']}`)
    }
  }
} finally {
  fs.rmSync(dir, {recursive: true, force: true})
}
const median = (xs: number[]) => {
  const sorted = [...xs].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2)
}
for (const checkout of [a, b]) {
  const runs = results[checkout]!
  console.log(`${checkout}: median ${median(runs.map(r => r.totalMs))} ms, peak ${Math.min(...runs.map(r => r.maxRssMiB))}–${Math.max(...runs.map(r => r.maxRssMiB))} MiB`)
}
