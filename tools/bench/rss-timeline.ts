// Peak memory by phase: runs `toma analyze`'s analysis of CORE in a child process (with the malloc
// tunables `toma analyze` runs with), samples its resident set every 5 ms from /proc, and prints
// each phase's RSS at its start, its largest and at its end (Linux only).
//   node dist/tools/bench/rss-timeline.js CORE [--dist DIR] [--detail PHASE] [--workers N] [--memory-limit SIZE]
// (DIR: another build's dist, for A/B runs; PHASE: also print that phase's every sample, "ms:MiB";
// N: the analysis's threads, as `toma analyze --workers N`; SIZE: as `toma analyze --memory-limit`).
import {spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {tunedMallocEnvironment} from '../../src/cli/malloc-tuning.js'
import type * as AnalyzeCoreModule from '../../src/pipeline/analyze-core.js'
import type * as MemoryLimitModule from '../../src/store/memory-limit.js'
import {parseMemorySize} from '../../src/cli/parse-size.js'
import {root} from '../project-root.js'

const args = process.argv.slice(2)
if (args[0] === '--child') {
  // The analysis; "<ms since epoch> <phase>" on stderr at each new phase, written at once.
  const [, dist = '', core = '', index, workers = '', limit = ''] = args
  // Another build's dist (--dist) is imported by its path; its analyzeCore is taken to have this one's signature.
  const {analyzeCore} = (await import(path.join(dist, 'src/pipeline/analyze-core.js'))) as typeof AnalyzeCoreModule
  let current: string | null = null
  const mark = (phase: string) => {
    if (phase !== current) fs.writeSync(2, `${Date.now()} ${(current = phase)}\n`)
  }
  mark('open core and module files')
  const {memoryLimitOf} = (await import(path.join(dist, 'src/store/memory-limit.js'))) as typeof MemoryLimitModule
  analyzeCore(core, {}, mark, index, undefined, {...(workers ? {workers: Number(workers)} : {}), ...(limit ? {memoryLimit: memoryLimitOf(parseMemorySize(limit))} : {})})
  mark('done')
  fs.writeSync(2, `peak ${Math.round(process.resourceUsage().maxRSS / 1024)}\n`)
  process.exit(0)
}

const core = args[0]
const distAt = args.indexOf('--dist')
const dist = path.resolve(distAt >= 0 ? args[distAt + 1]! : path.join(root, 'dist'))
const detailAt = args.indexOf('--detail')
const detail = detailAt >= 0 ? args[detailAt + 1] : undefined
const workersAt = args.indexOf('--workers')
const workers = workersAt >= 0 ? args[workersAt + 1] : undefined
const limitAt = args.indexOf('--memory-limit')
const limit = limitAt >= 0 ? args[limitAt + 1] : undefined
if (!core || !fs.existsSync(core)) {
  console.error('usage: node dist/tools/bench/rss-timeline.js CORE [--dist DIR] [--detail PHASE] [--workers N] [--memory-limit SIZE]')
  process.exit(2)
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toma-rss-'))
// Malloc tuned as `toma analyze` runs (src/cli/malloc-tuning.ts), unless TOMA_MALLOC=system says otherwise.
const env = tunedMallocEnvironment(process.env) ?? process.env
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', dist, core, path.join(dir, 'index'), workers ?? '', limit ?? ''], {env, stdio: ['ignore', 'inherit', 'pipe']})
const marks: Array<{at: number; phase: string}> = []
let peak: number | null = null
let text = ''
child.stderr.on('data', d => {
  text += d
  for (let nl; (nl = text.indexOf('\n')) >= 0; text = text.slice(nl + 1)) {
    const line = text.slice(0, nl)
    const m = /^(\d+) (.*)$/.exec(line)
    if (m) marks.push({at: Number(m[1]), phase: m[2]!})
    else if (line.startsWith('peak ')) peak = Number(line.slice(5))
    else console.error(line)
  }
})
const samples: Array<{at: number; mib: number}> = []
const timer = setInterval(() => {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))
    if (kb) samples.push({at: Date.now(), mib: Math.round(Number(kb[1]) / 1024)})
  } catch {
    // the child has ended
  }
}, 5)
child.on('exit', code => {
  clearInterval(timer)
  fs.rmSync(dir, {recursive: true, force: true})
  if (code !== 0) process.exit(code ?? 1)
  const t0 = marks[0]?.at ?? 0
  for (let i = 0; i < marks.length; i++) {
    const end = marks[i + 1]?.at ?? Infinity
    const mark = marks[i]!
    const inPhase = samples.filter(s => s.at >= mark.at && s.at < end).map(s => s.mib)
    const rss = inPhase.length ? `start ${inPhase[0]} max ${Math.max(...inPhase)} end ${inPhase.at(-1)} MiB` : ''
    console.log(`${((mark.at - t0) / 1000).toFixed(2).padStart(7)} s  ${mark.phase.padEnd(28)} ${rss}`)
    if (detail === mark.phase) console.log(samples.filter(s => s.at >= mark.at && s.at < end).map(s => `${s.at - mark.at}:${s.mib}`).join(' '))
  }
  console.log(`peak RSS (the kernel's): ${peak} MiB`)
})
