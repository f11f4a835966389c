// npm run fuzz -- --mutants N [--seed S] [--jobs 2] [--batch 100] [--timeout 30] [--max-rss-mb 3072]
//                 [--fixtures id,id] [--index-share 0.02] [--log FILE] [--only ID,ID]
// Analyses N damaged copies of the fixture cores (plausible wrong values in TCMalloc's structures,
// bit flips, cuts at structure boundaries, damaged ELF headers and notes; tools/fuzz/fuzz-worker.ts)
// and a share of damaged index files through the query commands, and reports internal errors,
// hangs (a mutant over --timeout seconds), peak memory per mutant (VmRSS of the child sampled
// every 50 ms), and answers that changed without a warning or a failed cross-check. Seeded: the
// same seed and N give the same mutants. Children run with --max-old-space-size and one batch
// each, in parallel over --jobs processes. Exit 1 when anything failed.
import {execFile, fork, spawnSync} from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'
import type {ProgramOptions} from '../../src/program/program.js'
import {root} from '../project-root.js'
import type {FuzzBatch, FuzzReport} from './fuzz-worker.js'

interface Fixture { id: string; exe: string; tcmalloc?: string }
interface Batch { fixture: Fixture; ids: number[] }

const arg = <T extends string | undefined>(name: string, fallback: T): string | T => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : fallback
}
const mutants = Number(arg('mutants', '1000'))
const seed = Number(arg('seed', '20261123')) >>> 0
const jobs = Number(arg('jobs', String(Math.min(2, os.cpus().length))))
const batchSize = Number(arg('batch', '100'))
const timeoutMs = Number(arg('timeout', '30')) * 1000
const maxRss = Number(arg('max-rss-mb', '3072')) * 2 ** 20
const indexShare = Number(arg('index-share', '0.02'))
const logFile = arg('log', undefined)
if (!(mutants > 0) || !(jobs > 0) || !(batchSize > 0)) {
  console.error('fuzz: --mutants, --jobs and --batch take positive numbers')
  process.exit(2)
}

const fixturesDir = path.join(root, 'fixtures/cores')
const wanted = arg('fixtures', undefined)?.split(',')
const fixtures = (JSON.parse(fs.readFileSync(path.join(fixturesDir, 'index.json'), 'utf8')) as Fixture[]).filter(f => !wanted || wanted.includes(f.id))

/** The decompressed core, cached in the project's git-ignored .toma/ (not the temp folder: it outlives a run on purpose). */
function corePath(id: string): string {
  const br = path.join(fixturesDir, id, 'core.br')
  const digest = crypto.createHash('sha1').update(fs.readFileSync(br)).digest('hex')
  const out = path.join(root, '.toma', 'fuzz-cores', `${id}-${digest.slice(0, 12)}.core`)
  if (fs.existsSync(out)) return out
  // Decompressed by the fixtures' own tool into a temporary name, then moved into place whole.
  fs.mkdirSync(path.dirname(out), {recursive: true})
  const partial = `${out}.tmp-${process.pid}`
  if (spawnSync(process.execPath, [path.join(root, 'fixtures/tools/brotli.mjs'), 'decompress', br, partial], {stdio: 'inherit'}).status !== 0) {
    console.error(`fuzz: cannot decompress ${br}`)
    process.exit(2)
  }
  fs.renameSync(partial, out)
  return out
}

const flagsOf = (f: Fixture): ProgramOptions & {exe: string; tcmalloc?: string} => {
  const dir = path.join(fixturesDir, f.id)
  return {exe: path.join(dir, f.exe), ...(f.tcmalloc ? {tcmalloc: path.join(dir, f.tcmalloc)} : {})}
}

// Mutant ids split into index mutants (every 1/indexShare-th id) and core mutants, in batches of
// consecutive ids of one fixture (a child analyses its fixture's clean core once per batch).
const indexEvery = indexShare > 0 ? Math.round(1 / indexShare) : Infinity
const coreIds: number[] = []
const indexIds: number[] = []
for (let id = 0; id < mutants; id++) (id % indexEvery === indexEvery - 1 ? indexIds : coreIds).push(id)
const batches: Batch[] = []
for (let i = 0; i < coreIds.length; i += batchSize) {
  const f = fixtures[(i / batchSize) % fixtures.length]!
  batches.push({fixture: f, ids: coreIds.slice(i, i + batchSize)})
}

// --only ID,ID: re-runs those mutants of the same seed and N (each keeps its fixture and damage).
const only = arg('only', undefined)?.split(',').map(Number)
if (only) {
  for (const b of batches) b.ids = b.ids.filter(id => only.includes(id))
  batches.splice(0, batches.length, ...batches.filter(b => b.ids.length > 0))
  indexIds.splice(0, indexIds.length, ...indexIds.filter(id => only.includes(id)))
}

const counts = new Map<string, number>()
const byKind = new Map<string, Record<string, number>>()
const failures: Array<{id: number; fixture: string; label: string; outcome: string; detail: string}> = []
const rssPerMutant: number[] = []
const msPerMutant: number[] = []
const log = logFile ? fs.createWriteStream(logFile) : null
let done = 0
const started = Date.now()
const record = (id: number, fixture: string, label: string, outcome: string, detail: string, ms?: number, rss?: number) => {
  counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
  const k = byKind.get(label.split('+')[0]) ?? {}
  k[outcome] = (k[outcome] ?? 0) + 1
  byKind.set(label.split('+')[0], k)
  if (rss) rssPerMutant.push(rss)
  if (ms !== undefined) msPerMutant.push(ms)
  if (['internal', 'silent', 'hang', 'memory'].includes(outcome)) failures.push({id, fixture, label, outcome, detail})
  log?.write(JSON.stringify({id, fixture, label, outcome, detail, ms: ms && Math.round(ms), rssMb: rss && Math.round(rss / 2 ** 20)}) + '\n')
  if (++done % 500 === 0) console.error(`[fuzz] ${done}/${mutants} mutants, ${((Date.now() - started) / 1000).toFixed(0)} s, failures ${failures.length}`)
}

function vmRss(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Runs one batch in a fresh child; a hung or runaway mutant kills the child and the rest of the batch goes on in another. */
function runBatch(batch: Batch): Promise<void> {
  return new Promise(resolve => {
    const child = fork(path.join(snapshot, 'tools/fuzz/fuzz-worker.js'), [], {execArgv: ['--max-old-space-size=2048'], stdio: ['ignore', 'ignore', 'pipe', 'ipc']})
    let stderr = ''
    child.stderr!.on('data', d => (stderr = (stderr + d).slice(-4000)))
    let current: {id: number; label: string; started: number; peak: number} | null = null
    const finished = new Set<number>()
    const sampler = setInterval(() => {
      if (!current) return
      const rss = vmRss(child.pid)
      current.peak = Math.max(current.peak, rss)
      const over = performance.now() - current.started > timeoutMs ? 'hang' : rss > maxRss ? 'memory' : null
      if (over) {
        record(current.id, batch.fixture.id, current.label, over, `${over === 'hang' ? `over ${timeoutMs / 1000} s` : `RSS ${Math.round(rss / 2 ** 20)} MB`}`, performance.now() - current.started, current.peak)
        finished.add(current.id)
        current = null
        child.kill('SIGKILL')
      }
    }, 50)
    child.on('message', (msg: FuzzReport) => {
      if (msg.type === 'ready') {
        const work: FuzzBatch = {corePath: corePath(batch.fixture.id), flags: flagsOf(batch.fixture), seed, ids: batch.ids}
        child.send(work)
      } else if (msg.type === 'start') {
        current = {id: msg.id, label: msg.label, started: performance.now(), peak: vmRss(child.pid)}
      } else if (msg.type === 'done') {
        const peak = Math.max(current?.peak ?? 0, msg.rss, vmRss(child.pid))
        record(msg.id, batch.fixture.id, msg.label, msg.outcome, msg.detail, msg.ms, peak)
        finished.add(msg.id)
        current = null
      } else if (msg.type === 'batch-done') {
        child.kill()
      }
    })
    child.on('exit', code => {
      clearInterval(sampler)
      if (current) {
        // The child died inside a mutant without a report (out of heap, a native crash).
        record(current.id, batch.fixture.id, current.label, 'internal', `child exited with ${code} during the mutant: ${stderr.trim().split('\n').slice(-3).join(' | ')}`, undefined, current.peak)
        finished.add(current.id)
      }
      const left = batch.ids.filter(id => !finished.has(id))
      if (left.length === 0) resolve()
      else if (finished.size === 0) {
        // The child failed before its first mutant (its clean analysis): report once, do not loop.
        for (const id of left) record(id, batch.fixture.id, 'batch', 'internal', `child exited with ${code} before the batch: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)
        resolve()
      } else runBatch({fixture: batch.fixture, ids: left}).then(resolve)
    })
  })
}

/** Damaged index files through the query commands: one clear line or an answer, never an internal error. */
async function runIndexMutants() {
  if (indexIds.length === 0) return
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'toma-fuzz-index-'))
  process.on('exit', () => fs.rmSync(temp, {recursive: true, force: true}))
  try {
    const f = fixtures[0]!
    const core = path.join(temp, 'core')
    fs.symlinkSync(corePath(f.id), core)
    const flags = flagsOf(f)
    // Asynchronous: the batches of the other job go on meanwhile.
    const cli = (args: string[]) =>
      new Promise<{status: number | null; signal: NodeJS.Signals | null; stderr: string; timedOut: boolean}>(resolve =>
        execFile(process.execPath, [path.join(root, 'bin/run.js'), ...args], {cwd: temp, encoding: 'utf8', env: {...process.env, NO_COLOR: '1'}, timeout: timeoutMs, killSignal: 'SIGKILL'}, (error, _stdout, stderr) =>
          resolve({status: error ? (typeof error.code === 'number' ? error.code : null) : 0, signal: error?.signal ?? null, stderr, timedOut: error?.killed === true}),
        ),
      )
    const made = await cli(['analyze', core, '--exe', flags.exe, ...(flags.tcmalloc ? ['--tcmalloc', flags.tcmalloc] : []), '--index', path.join(temp, 'clean.toma-index')])
    if (made.status !== 0) throw new Error(`fuzz: analyze of ${f.id} failed: ${made.stderr}`)
    const clean = fs.readFileSync(path.join(temp, 'clean.toma-index'))
    const headerEnd = 16 + clean.readUInt32LE(12)
    const truth = JSON.parse(fs.readFileSync(path.join(fixturesDir, f.id, 'truth.json'), 'utf8')) as {objects: Array<{address: string}>}
    for (const id of indexIds) {
      let a = (seed ^ Math.imul(id + 1, 0x85ebca6b)) >>> 0
      const rnd = (n: number) => {
        a = (Math.imul(a ^ (a >>> 16), 0x45d9f3b) + 0x3c6ef372) >>> 0
        return a % n
      }
      const bytes = Buffer.from(clean)
      const kind = ['header-byte', 'header-number', 'array-bytes', 'truncate'][rnd(4)]!
      let mutated = bytes
      if (kind === 'header-byte') bytes[rnd(headerEnd)] = rnd(256)
      else if (kind === 'header-number') {
        // A digit run in the JSON header (an array offset or length) made huge, negative or shifted.
        const json = bytes.subarray(16, headerEnd).toString('latin1')
        const runs = [...json.matchAll(/\d+/g)]
        const r = runs[rnd(runs.length)]!
        const value = ['1000000000000', '-1', '0', String(Number(r[0]) + 1), '9007199254740993'][rnd(5)]
        const text = json.slice(0, r.index) + value + json.slice(r.index! + r[0].length)
        const head = Buffer.alloc(16)
        bytes.copy(head, 0, 0, 16)
        head.writeUInt32LE(Buffer.byteLength(text, 'latin1'), 12)
        mutated = Buffer.concat([head, Buffer.from(text, 'latin1'), bytes.subarray(headerEnd)])
      } else if (kind === 'array-bytes') for (let k = 0; k < 16; k++) bytes[headerEnd + rnd(bytes.length - headerEnd)] = rnd(256)
      else mutated = bytes.subarray(0, rnd(bytes.length))
      const file = path.join(temp, 'm.toma-index')
      fs.writeFileSync(file, mutated)
      const address = truth.objects[rnd(truth.objects.length)]!.address
      const command = [['find-object', address, file], ['classes', file], ['refs', address, file], ['leaks', file]][rnd(4)]!
      const t0 = performance.now()
      const r = await cli(command)
      const ms = performance.now() - t0
      const label = `index-${kind}`
      const lines = r.stderr.trim().split('\n').filter(l => l && !/^using the analysis/.test(l))
      let outcome: string
      if (r.timedOut || r.signal) outcome = 'hang'
      else if (r.status === 0) outcome = 'same'
      else if (/internal error|^\s+at /m.test(r.stderr) || lines.length > 1) outcome = 'internal'
      else outcome = 'refused'
      record(id, f.id, label, outcome, outcome === 'same' ? '' : `${command[0]} exit ${r.status}: ${r.stderr.trim().slice(0, 300)}`, ms)
      fs.rmSync(file, {force: true})
    }
  } finally {
    fs.rmSync(temp, {recursive: true, force: true})
  }
}

console.error(`[fuzz] ${mutants} mutants (${coreIds.length} core, ${indexIds.length} index) over ${fixtures.length} fixture(s), seed ${seed}, ${jobs} job(s)`)
for (const f of fixtures) corePath(f.id)
// Children run from a copy of dist/ taken now, inside the project so its packages resolve. The
// copy is of the dist/ this file runs from (dist/tools/fuzz/fuzz.js).
const snapshot = path.join(root, '.toma', `fuzz-dist-${process.pid}`)
fs.cpSync(fileURLToPath(new URL('../..', import.meta.url)), snapshot, {recursive: true})
process.on('exit', () => fs.rmSync(snapshot, {recursive: true, force: true}))
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130))
const queue = [...batches]
const workers = [...Array(jobs)].map(async (_, j) => {
  if (j === 0) await runIndexMutants()
  while (queue.length) await runBatch(queue.shift()!)
})
await Promise.all(workers)
log?.end()

const seconds = (Date.now() - started) / 1000
const sorted = [...rssPerMutant].sort((a, b) => a - b)
const pct = (p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! / 2 ** 20) : 0)
const msSorted = [...msPerMutant].sort((a, b) => a - b)
console.log(`fuzz: ${done} mutants run (of --mutants ${mutants}), seed ${seed}, ${fixtures.length} fixture(s), ${jobs} job(s), ${seconds.toFixed(0)} s`)
console.log(`outcomes: ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}`)
console.log(`internal errors ${counts.get('internal') ?? 0}, hangs ${counts.get('hang') ?? 0}, over memory ${counts.get('memory') ?? 0}, silent changes ${counts.get('silent') ?? 0}`)
console.log(`peak RSS per mutant (child process): median ${pct(0.5)} MB, p99 ${pct(0.99)} MB, max ${pct(1)} MB; time per mutant: median ${Math.round(msSorted[Math.floor(msSorted.length / 2)] ?? 0)} ms, max ${Math.round(msSorted[msSorted.length - 1] ?? 0)} ms`)
console.log('by damage:')
for (const [k, v] of [...byKind].sort()) console.log(`  ${k.padEnd(18)} ${Object.entries(v).map(([o, n]) => `${o} ${n}`).join(', ')}`)
for (const f of failures.slice(0, 20)) console.log(`FAIL ${f.outcome} mutant ${f.id} (${f.fixture}, ${f.label}): ${String(f.detail).split('\n').slice(0, 4).join(' | ')}`)
if (failures.length > 20) console.log(`... and ${failures.length - 20} more`)
process.exit(failures.length ? 1 : 0)
