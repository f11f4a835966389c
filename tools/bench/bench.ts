// npm run bench [-- --scale 20] [--pairs 3] [--no-compare] [--keep]: builds fixtures/programs/bench.cpp against the system's
// libtcmalloc, runs it with SCALE million objects, dumps it with gcore, and measures toma on it
// next to the time of reading the core once. Appends the run to bench/history.jsonl (its figures,
// the whole result and the section of text it used to append) and rewrites the table of current
// figures in BENCHMARKS.md from that log (tools/bench/bench-log.ts).
// Needs g++, gdb (gcore) and libgoogle-perftools-dev; uses .toma/bench/ (git-ignored) for files.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {tunedMallocEnvironment} from '../../src/cli/malloc-tuning.js'
import {root} from '../project-root.js'
import {recordRun} from './bench-log.js'
import type {AnalyzeStep, QueryStep} from './bench-run.js'
import type {ServePagesResult} from './serve-pages.js'
import {servePagesMarkdown} from './serve-pages.js'
import {startupTimes} from './startup-time.js'

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : undefined
}
const scale = Number(arg('scale') ?? 24)
const work = arg('dir') ?? path.join(root, '.toma', 'bench')
fs.mkdirSync(work, {recursive: true})
const log = (m: string) => console.error(`[bench] ${m}`)
const need = (cmd: string, pkg: string) => {
  if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) {
    console.error(`bench: needs ${cmd} (apt-get install ${pkg})`)
    process.exit(2)
  }
}
need('g++', 'g++')
need('gcore', 'gdb')
if (!fs.existsSync('/usr/include/gperftools/malloc_extension.h')) {
  console.error('bench: needs libgoogle-perftools-dev (apt-get install libgoogle-perftools-dev)')
  process.exit(2)
}
// `npm run bench` builds first (package.json): the whole build, as tsc alone would leave the fast
// path's bundles older than the compiled commands (bin/run.js then runs the compiled modules).

const exe = path.join(work, 'bench')
execFileSync('g++', ['-O2', '-o', exe, path.join(root, 'fixtures/programs/bench.cpp'), '-ltcmalloc'])
for (const f of fs.readdirSync(work)) if (f.startsWith('core')) fs.rmSync(path.join(work, f))

log(`running bench with ${scale} million objects`)
const child = spawn(exe, [String(scale)], {stdio: ['ignore', 'pipe', 'inherit']})
const pid = await new Promise<number>((resolve, reject) => {
  let out = ''
  child.stdout.on('data', d => {
    out += d
    const m = /READY (\d+)/.exec(out)
    if (m) resolve(Number(m[1]))
  })
  child.on('exit', code => reject(new Error(`bench exited ${code}`)))
})
const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
log('gcore')
let t = Date.now()
execFileSync('gcore', ['-o', path.join(work, 'core'), String(pid)], {stdio: 'ignore'})
const gcoreMs = Date.now() - t
child.kill('SIGKILL')
const core = path.join(work, `core.${pid}`)
// The core's pages go to the disk now, not in the kernel's writeback during the first analysis.
execFileSync('sync')
const coreBytes = fs.statSync(core).size

const timeCat = () => {
  const t0 = process.hrtime.bigint()
  execFileSync('sh', ['-c', `cat '${core}' > /dev/null`])
  return Number((process.hrtime.bigint() - t0) / 1_000_000n)
}
// Reading the file from the disk itself, bypassing the page cache (O_DIRECT), is the cold floor.
const t1 = process.hrtime.bigint()
const direct = spawnSync('dd', [`if=${core}`, 'of=/dev/null', 'bs=16M', 'iflag=direct'], {stdio: 'ignore'})
const ddDirectMs = direct.status === 0 ? Number((process.hrtime.bigint() - t1) / 1_000_000n) : null
const catFirstMs = timeCat()
const catWarmMs = timeCat()
log(`core ${(coreBytes / 2 ** 30).toFixed(2)} GiB; cat: ${catFirstMs} ms first, ${catWarmMs} ms warm`)

// Each step runs with malloc tuned as `toma analyze` runs (src/cli/malloc-tuning.ts), unless
// TOMA_MALLOC=system says otherwise, as it does for toma.
const runEnv = tunedMallocEnvironment(process.env) ?? process.env
const mallocTunables = runEnv === process.env ? null : runEnv.GLIBC_TUNABLES
const benchRun = fileURLToPath(new URL('./bench-run.js', import.meta.url))
const runStep = (...args: string[]): unknown => {
  const r = spawnSync(process.execPath, [benchRun, ...args], {encoding: 'utf8', maxBuffer: 1 << 24, env: runEnv})
  if (r.status !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout)
}
const run = (...args: string[]) => runStep(...args) as AnalyzeStep
const index = core + '.toma-index'
log('analyze')
const analyze = run('analyze', core, index)
log(`analyze ${analyze.totalMs} ms, peak RSS ${analyze.maxRssMiB} MiB`)
// The first answer: the model stage alone (what `classes` and `find-object` wait for from no index).
const modelIndex = index + '.model'
log('analyze --stage model')
const model = run('analyze', core, modelIndex, '--stage', 'model')
fs.rmSync(modelIndex, {force: true})
log(`model stage ${model.totalMs} ms, peak RSS ${model.maxRssMiB} MiB`)
// What the retention analysis (paths, dominators, retained sizes) adds, measured on the same core
// and at the same thread count: `--pairs` pairs of analyses (default 3) with reachability alone (no
// retention) and with retention, run back to back (each pair in the other order from the last),
// to throwaway indexes; then one pair on one thread. On a shared VM one analysis can take a third
// longer than the one before it, so the added time is each pair's own and the figure is their
// median. `--no-compare` (the largest cores) skips them.
const compare = !process.argv.includes('--no-compare')
const pairCount = Math.max(1, Math.floor(Number(arg('pairs') ?? 3)))
let oneThread: AnalyzeStep | null = null
let noRetentionOneThread: AnalyzeStep | null = null
const pairs: Array<{without: AnalyzeStep; with: AnalyzeStep}> = []
if (compare) {
  const scratch = index + '.compare'
  // Each comparison analysis writes a new index: the last one's is removed before it, untimed. An
  // analysis that renames its index over an old one waits while the old file is freed (0.35–1.8 s
  // for a 1.8 GiB file on the bench VM), which is not what is measured here.
  const fresh = (...args: string[]) => {
    fs.rmSync(scratch, {force: true})
    execFileSync('sync')
    return run(...args)
  }
  for (let k = 0; k < pairCount; k++) {
    log(`pair ${k + 1} of ${pairCount}: analyze without retention (reachability only) and with it`)
    const without = () => fresh('analyze', core, scratch, '--no-retention')
    const withRetention = () => fresh('analyze', core, scratch)
    if (k % 2 === 0) {
      const a = without()
      pairs.push({without: a, with: withRetention()})
    } else {
      const b = withRetention()
      pairs.push({without: without(), with: b})
    }
  }
  log('analyze --workers 1')
  oneThread = fresh('analyze', core, scratch, '--workers', '1')
  log('analyze --workers 1 without retention')
  noRetentionOneThread = fresh('analyze', core, scratch, '--workers', '1', '--no-retention')
  fs.rmSync(scratch, {force: true})
}
// The floor for writing the index: a new file of its size written into the page cache, as the
// analysis writes it (on some VMs a write that needs fresh page-cache memory costs far more than a
// read of cached pages).
const indexBytes = fs.statSync(index).size
const writeFloorFile = path.join(work, 'write-floor')
const t2 = process.hrtime.bigint()
const ddWrite = spawnSync('dd', ['if=/dev/zero', `of=${writeFloorFile}`, 'bs=16M', `count=${Math.ceil(indexBytes / 2 ** 24)}`], {stdio: 'ignore'})
const ddWriteMs = ddWrite.status === 0 ? Number((process.hrtime.bigint() - t2) / 1_000_000n) : null
fs.rmSync(writeFloorFile, {force: true})
const query = runStep('query', core, index, '200') as QueryStep
const cliMs = (...args: string[]) => {
  const t0 = Date.now()
  const r = spawnSync(process.execPath, [path.join(root, 'bin/run.js'), ...args, core], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(r.stderr)
  return Date.now() - t0
}
// Each query as a whole command, on a random object and on one named by its holder alone (issue
// 52: those walked the dominator tree per query; the target is 0.5 s the first time, with the
// index out of the page cache, and 0.3 s after). Cold: the index's pages dropped first (dd's
// nocache flag: posix_fadvise DONTNEED), the core's left as they are.
const coldCliMs = (...args: string[]) => {
  spawnSync('dd', [`if=${index}`, 'iflag=nocache', 'count=0'], {stdio: 'ignore'})
  return cliMs(...args)
}
const commandTimes = (object: string, args: string[]) => ({command: args.join(' '), object, coldMs: coldCliMs(...args), warmMs: cliMs(...args)})
const cli = {
  commands: [
    ...['find-object', 'refs', 'path'].map(c => commandTimes('random', [c, query.example])),
    ...(query.unnamedExample ? ['find-object', 'refs', 'path'].map(c => commandTimes('named by its holder', [c, query.unnamedExample!])) : []),
    ...[['classes'], ['top'], ['top', '--by', 'type']].map(args => commandTimes('', args)),
  ],
  version: (() => {
    const t0 = Date.now()
    spawnSync(process.execPath, [path.join(root, 'bin/run.js'), '--version'])
    return Date.now() - t0
  })(),
}
// toma serve's pages on the index just made (issue 55: each ≤ 200 ms, the first load included), in
// a fresh process; then `toma serve` as a command, to its printed URL.
log('serve pages')
const servePages = (() => {
  const r = spawnSync(process.execPath, [fileURLToPath(new URL('./serve-pages.js', import.meta.url)), core, '--index', index, '--exe', exe, '--json'], {encoding: 'utf8', maxBuffer: 1 << 24})
  if (r.status !== 0) throw new Error(`serve-pages: ${r.stderr}`)
  return JSON.parse(r.stdout) as ServePagesResult
})()
log(`serve pages: slowest first load ${servePages.slowestFirstMs.toFixed(1)} ms (${servePages.slowestUrl}), URL printed after ${servePages.urlPrintedMs?.toFixed(0)} ms${servePages.failures.length ? `; failed: ${servePages.failures.join(', ')}` : ''}`)
log('start-up')
const startup = startupTimes(core, query.example, 10)
log(`start-up (median of ${startup.runs}, wall / CPU, load ${startup.load}): node -e 0 ${startup.nodeMs} / ${startup.nodeCpuMs} ms, toma --version ${startup.versionMs} / ${startup.versionCpuMs} ms, find-object ${startup.findObjectMs} / ${startup.findObjectCpuMs} ms`)

const brief = (r: AnalyzeStep) => ({totalMs: r.totalMs, maxRssMiB: r.maxRssMiB, threads: r.threads})
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '?'
const result = {
  date: new Date().toISOString(),
  machine: `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
  mallocTunables,
  command: `npm run bench -- --scale ${scale}${compare ? '' : ' --no-compare'}`,
  scale,
  processRssMiB: Math.round(rssKiB / 1024),
  coreBytes,
  gcoreMs,
  ddDirectMs,
  catFirstMs,
  catWarmMs,
  ddWriteMs,
  analyze,
  model,
  comparison: compare
    ? {
        pairs: pairs.map(p => ({without: brief(p.without), with: brief(p.with)})),
        oneThread: oneThread && brief(oneThread),
        noRetentionOneThread: noRetentionOneThread && brief(noRetentionOneThread),
      }
    : null,
  indexBytes,
  query,
  cliWallMs: cli,
  servePages,
  startup,
}
console.log(JSON.stringify(result, null, 2))
const gib = (b: number) => (b / 2 ** 30).toFixed(2) + ' GiB'
// One analysis can take a third longer than the one before it on a shared VM: the median of all.
const withRuns = [analyze, ...pairs.map(p => p.with)]
const pct = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(0)} %`
const perSlot = (mib: number) => `${mib >= 0 ? '+' : ''}${((mib * 2 ** 20) / analyze.objects).toFixed(1)} B per slot`
const md = `
## ${result.date.slice(0, 16).replace('T', ' ')} UTC — scale ${scale} (\`${result.command}\`)

Machine: ${result.machine}; malloc: ${mallocTunables ? `GLIBC_TUNABLES=${mallocTunables}, as \`toma analyze\` runs` : `as the environment has it (GLIBC_TUNABLES=${process.env.GLIBC_TUNABLES ?? ''})`}. Core: ${gib(coreBytes)} (process RSS ${result.processRssMiB} MiB), ${analyze.objects.toLocaleString('en-US')} object slots,
${analyze.live.toLocaleString('en-US')} live objects (${gib(analyze.liveBytes)}), ${analyze.edges.toLocaleString('en-US')} edges; cross-check with TCMalloc's counters: ${analyze.crossCheckEqual ? 'all equal' : 'DIFFERENT'}, ${analyze.warnings} warnings.

| measure | time | toma analyze ÷ this |
|---|---|---|
| read from the disk, bypassing the page cache (\`dd iflag=direct bs=16M\`) | ${ddDirectMs ?? 'n/a'} ms | ${ddDirectMs ? (analyze.totalMs / ddDirectMs).toFixed(1) + '×' : ''} |
| \`cat core > /dev/null\` (the core was just written: page cache) | ${catFirstMs} ms | ${(analyze.totalMs / catFirstMs).toFixed(1)}× |
| \`cat core > /dev/null\` again | ${catWarmMs} ms | ${(analyze.totalMs / catWarmMs).toFixed(1)}× |
| writing a new file of the index's size into the page cache (\`dd if=/dev/zero bs=16M\`) | ${ddWriteMs ?? 'n/a'} ms | ${ddWriteMs ? (analyze.totalMs / ddWriteMs).toFixed(1) + '×' : ''} |
| toma analyze (classify + scan + types + index) | ${analyze.totalMs} ms | |
${analyze.phases.map(p => `| — ${p.phase} | ${p.ms} ms | |`).join('\n')}

Per GiB of core: ${(analyze.totalMs / 1000 / (coreBytes / 2 ** 30)).toFixed(1)} s of analyze.
The first answer, \`analyze --stage model\` (the heap model, states, sizes and types by vtable, and its index): ${model.totalMs} ms (${(model.totalMs / catWarmMs).toFixed(1)}× the warm \`cat\`), peak RSS ${model.maxRssMiB} MiB.
Peak RSS of analyze: ${analyze.maxRssMiB} MiB (${(analyze.maxRssMiB * 2 ** 20 / analyze.objects).toFixed(1)} bytes per object slot), ${analyze.threads} thread${analyze.threads > 1 ? 's' : ''}. Index: ${gib(indexBytes)}.

${compare ? `What the retention analysis (paths from roots, dominators, retained sizes) adds, on this core, at the same thread count:

| threads | reachability only (no retention) | with retention | added time | added peak RSS |
|---|---|---|---|---|
${pairs.map((p, k) => `| ${p.with.threads} (default), pair ${k + 1} | ${p.without.totalMs} ms, ${p.without.maxRssMiB} MiB | ${p.with.totalMs} ms, ${p.with.maxRssMiB} MiB | ${pct(p.with.totalMs, p.without.totalMs)} | ${perSlot(p.with.maxRssMiB - p.without.maxRssMiB)} |`).join('\n')}
| ${pairs[0]!.with.threads} (default), median of the ${pairs.length} pairs | ${median(pairs.map(p => p.without.totalMs))} ms, ${median(pairs.map(p => p.without.maxRssMiB))} MiB | ${median(pairs.map(p => p.with.totalMs))} ms, ${median(pairs.map(p => p.with.maxRssMiB))} MiB | ${pct(1 + median(pairs.map(p => p.with.totalMs / p.without.totalMs - 1)), 1)} | ${perSlot(median(pairs.map(p => p.with.maxRssMiB - p.without.maxRssMiB)))} |
| 1 (\`--workers 1\`) | ${noRetentionOneThread!.totalMs} ms, ${noRetentionOneThread!.maxRssMiB} MiB | ${oneThread!.totalMs} ms, ${oneThread!.maxRssMiB} MiB | ${pct(oneThread!.totalMs, noRetentionOneThread!.totalMs)} | ${perSlot(oneThread!.maxRssMiB - noRetentionOneThread!.maxRssMiB)} |

The ${withRuns.length} two-thread analyses with retention of this run (the first above and the pairs'): median ${median(withRuns.map(r => r.totalMs))} ms (${(median(withRuns.map(r => r.totalMs)) / catWarmMs).toFixed(1)}× the warm \`cat\`), peak RSS median ${median(withRuns.map(r => r.maxRssMiB))} MiB, from ${Math.min(...withRuns.map(r => r.maxRssMiB))} to ${Math.max(...withRuns.map(r => r.maxRssMiB))} MiB.
` : '(Run with `--no-compare`: the analyses without retention and on one thread were not run.)\n'}
Queries from the index (in-process, ${query.sample} random live objects; opening index + module files once: ${query.openMs} ms):
find-object median ${query.findObject.medianMs} ms, p95 ${query.findObject.p95Ms} ms, max ${query.findObject.maxMs} ms;
refs median ${query.refs.medianMs} ms, p95 ${query.refs.p95Ms} ms, max ${query.refs.maxMs} ms;
path median ${query.path.medianMs} ms, p95 ${query.path.p95Ms} ms, max ${query.path.maxMs} ms;
dominators (depth 2) median ${query.dominators.medianMs} ms, p95 ${query.dominators.p95Ms} ms, max ${query.dominators.maxMs} ms;
${query.unnamed ? `on ${query.unnamedSample} random objects named by their holder alone: find-object median ${query.unnamed.findObject.medianMs} ms, p95 ${query.unnamed.findObject.p95Ms} ms, max ${query.unnamed.findObject.maxMs} ms; refs median ${query.unnamed.refs.medianMs} ms, p95 ${query.unnamed.refs.p95Ms} ms; path median ${query.unnamed.path.medianMs} ms, p95 ${query.unnamed.path.p95Ms} ms;` : 'no object named by its holder alone;'}
classes ${query.classesMs} ms, top ${query.topMs} ms, top --by type ${query.topByTypeMs} ms, suspects ${query.suspectsMs} ms.
Whole CLI runs (Node start, oclif, index and module files, query), with the index out of the page cache / then in it: ${cli.commands.map(c => `${c.command.replace(/ 0x[0-9a-f]+$/, '')}${c.object ? ` (${c.object})` : ''} ${c.coldMs} / ${c.warmMs} ms`).join(', ')} (\`toma --version\` alone: ${cli.version} ms).

\`toma serve\`'s pages on this core (issue 55's goal: each ≤ 200 ms, the first load included), each URL loaded twice in a row in one server (\`node dist/tools/bench/serve-pages.js CORE --index INDEX --exe EXE\`):

${servePagesMarkdown(servePages)}

Start-up (median of ${startup.runs} runs, wall / CPU user+sys, at a load of ${startup.load}; target: a query from the index ≤ 120 ms wall): \`node -e 0\` ${startup.nodeMs} / ${startup.nodeCpuMs} ms, \`toma --version\` ${startup.versionMs} / ${startup.versionCpuMs} ms, \`toma find-object ADDRESS CORE\` ${startup.findObjectMs} / ${startup.findObjectCpuMs} ms.
`
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {cwd: root, encoding: 'utf8'})
const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {cwd: root, encoding: 'utf8'})
const commit = head.status === 0 ? head.stdout.trim() + (dirty.stdout.trim() ? '+dirty' : '') : null
recordRun(root, {
  date: result.date,
  scale,
  command: result.command,
  commit,
  figures: {
    coreGiB: +(coreBytes / 2 ** 30).toFixed(2),
    objects: analyze.objects,
    analyzeMs: analyze.totalMs,
    modelStageMs: model.totalMs,
    peakRssMiB: analyze.maxRssMiB,
    threads: analyze.threads,
    indexGiB: +(indexBytes / 2 ** 30).toFixed(2),
    findObjectMs: startup.findObjectMs,
    versionMs: startup.versionMs,
    serveSlowestPageMs: +servePages.slowestFirstMs.toFixed(1),
    serveUrlMs: servePages.urlPrintedMs === null ? null : Math.round(servePages.urlPrintedMs),
    serveFailures: servePages.failures.length,
  },
  result,
  text: md.trim(),
})
log('appended to bench/history.jsonl; rewrote the current figures in BENCHMARKS.md')
// The core (and its index, several GB at the larger scales and of no use without it) unless --keep.
if (!process.argv.includes('--keep')) for (const f of [core, index]) fs.rmSync(f, {force: true})
