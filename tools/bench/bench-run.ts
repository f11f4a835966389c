// Child of tools/bench/bench.ts: runs one measured step in a fresh process so that its peak RSS is
// its own (each step imports only the modules it runs, hence the dynamic imports).
//   node dist/tools/bench/bench-run.js analyze CORE INDEX [--workers N] [--no-retention] [--stage model] [--memory-limit SIZE]
//   node dist/tools/bench/bench-run.js query CORE INDEX N
import {performance} from 'node:perf_hooks'

/** What the analyze step prints (one JSON line). */
export interface AnalyzeStep {
  totalMs: number
  phases: Array<{phase: string; ms: number}>
  maxRssMiB: number
  threads: number
  objects: number
  live: number
  liveBytes: number
  edges: number
  crossCheckEqual: boolean
  warnings: number
  /** Passes the reverse edges took (1: at once). */
  reversePasses?: number
  forwardInFile?: boolean
}
interface Spread { medianMs: number; p95Ms: number; maxMs: number }
/** What the query step prints (one JSON line). */
export interface QueryStep {
  openMs: number
  findObject: Spread
  refs: Spread
  path: Spread
  dominators: Spread
  /** The same queries on objects no tier names, whose name is their holder's (issue 52): as many as `unnamedSample`. */
  unnamed: {findObject: Spread; refs: Spread; path: Spread} | null
  unnamedSample: number
  /** One of them (null: the core has none). */
  unnamedExample: string | null
  classesMs: number
  topMs: number
  topByTypeMs: number
  suspectsMs: number
  sample: number
  example: string
}

const [step, core = '', index = '', n] = process.argv.slice(2)
const phases: AnalyzeStep['phases'] = []
let current: {phase: string; start: number} | null = null
const progress = (phase: string) => {
  if (current?.phase === phase) return
  const now = performance.now()
  if (current) phases.push({phase: current.phase, ms: Math.round(now - current.start)})
  current = {phase, start: now}
}

if (step === 'analyze') {
  const {analyzeCore} = await import('../../src/pipeline/analyze-core.js')
  const t0 = performance.now()
  progress('open core and module files')
  const flag = (name: string) => process.argv.indexOf(name)
  const workers = flag('--workers') > 0 ? Number(process.argv[flag('--workers') + 1]) : undefined
  const stage = flag('--stage') > 0 ? (process.argv[flag('--stage') + 1] as 'model' | 'graph') : undefined
  const {memoryLimitOf} = await import('../../src/store/memory-limit.js')
  const {parseMemorySize} = await import('../../src/cli/parse-size.js')
  const memoryLimit = flag('--memory-limit') > 0 ? memoryLimitOf(parseMemorySize(process.argv[flag('--memory-limit') + 1]!)) : undefined
  const a = analyzeCore(core, {}, progress, index, undefined, {workers, retention: flag('--no-retention') < 0, stage, memoryLimit})
  progress('done')
  const totalMs = Math.round(performance.now() - t0)
  const s = a.summary
  const out: AnalyzeStep = {
    totalMs,
    phases,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    threads: a.threadsUsed,
    objects: a.heap.spans.totalObjects,
    live: s.states[0].objects,
    liveBytes: s.states[0].bytes,
    edges: s.graph?.edges ?? 0,
    crossCheckEqual: s.crossCheck.every(c => c.equal),
    warnings: s.warnings.total,
    reversePasses: a.memory.reversePasses,
    forwardInFile: a.memory.forwardInFile,
  }
  console.log(JSON.stringify(out))
} else if (step === 'query') {
  const {IndexFile} = await import('../../src/index/index-file.js')
  const {HeapIndex} = await import('../../src/index/heap-index.js')
  const {openProgram} = await import('../../src/program/open-program.js')
  const {knownModuleFiles} = await import('../../src/pipeline/analysis-inputs.js')
  const {objectInfo} = await import('../../src/queries/object-info.js')
  const {refsOf} = await import('../../src/queries/refs.js')
  const {RetentionIndex} = await import('../../src/index/retention-index.js')
  const {pathsTo} = await import('../../src/queries/paths.js')
  const {dominatedBy} = await import('../../src/queries/dominated.js')
  const {topObjects, topTypes} = await import('../../src/queries/top.js')
  const {suspectsOf} = await import('../../src/queries/suspects.js')
  const {classCounts} = await import('../../src/queries/classes.js')
  let t = performance.now()
  const opened = IndexFile.open(index)
  if (!opened) throw new Error(`${index}: an index of another format version`)
  const heap = new HeapIndex(opened)
  // The module files the analysis found, as a query from the CLI opens them (src/cli/open-index.ts).
  const program = openProgram(core, heap.meta.inputs.options, knownModuleFiles(heap.meta.inputs))
  heap.useCore(program.core.memory, core)
  const openMs = performance.now() - t
  // Random live objects, chosen with a fixed seed.
  let x = 12345
  const picks: number[] = []
  while (picks.length < Number(n)) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const s = x % heap.spanCount
    if (heap.spanLocation[s] !== 0) continue
    const k = x % heap.spanObjectCount[s]
    const id = heap.spanFirstObject[s] + k
    if (heap.state(id) !== 'live') continue
    picks.push(heap.spanStart[s] + k * heap.spanObjectSize[s] + 8)
  }
  // Objects no tier names (a holder name only), as many as a quarter of the picks: on with the same
  // sequence, past the picks, at most a million tries (a core may have none).
  const unnamedPicks: number[] = []
  for (let tries = 0; unnamedPicks.length < Math.ceil(Number(n) / 4) && tries < 1_000_000; tries++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const s = x % heap.spanCount
    if (heap.spanLocation[s] !== 0) continue
    const id = heap.spanFirstObject[s] + (x % heap.spanObjectCount[s])
    if (heap.state(id) !== 'live' || heap.typeId(id) !== 0 || heap.holderOf(id) === null) continue
    unnamedPicks.push(heap.spanStart[s] + (x % heap.spanObjectCount[s]) * heap.spanObjectSize[s] + 8)
  }
  const find: number[] = []
  const refs: number[] = []
  const paths: number[] = []
  const dominators: number[] = []
  // Each query gets its own RetentionIndex, as a fresh CLI run would (it caches what it reads).
  for (const a of picks) {
    t = performance.now()
    pathsTo(program, heap, new RetentionIndex(heap), a, {paths: 1})
    paths.push(performance.now() - t)
    t = performance.now()
    dominatedBy(heap, new RetentionIndex(heap), a, {depth: 2, limit: 10})
    dominators.push(performance.now() - t)
    t = performance.now()
    objectInfo(program, heap, a, false)
    find.push(performance.now() - t)
    t = performance.now()
    refsOf(program, heap, a, {incoming: true, outgoing: true, depth: 1, limit: 100})
    refs.push(performance.now() - t)
  }
  const unnamedTimes = {find: [] as number[], refs: [] as number[], paths: [] as number[]}
  for (const a of unnamedPicks) {
    t = performance.now()
    pathsTo(program, heap, new RetentionIndex(heap), a, {paths: 1})
    unnamedTimes.paths.push(performance.now() - t)
    t = performance.now()
    objectInfo(program, heap, a, false)
    unnamedTimes.find.push(performance.now() - t)
    t = performance.now()
    refsOf(program, heap, a, {incoming: true, outgoing: true, depth: 1, limit: 100})
    unnamedTimes.refs.push(performance.now() - t)
  }
  const stat = (v: number[]): Spread => {
    v.sort((a, b) => a - b)
    return {medianMs: +v[v.length >> 1]!.toFixed(2), p95Ms: +v[Math.floor(v.length * 0.95)]!.toFixed(2), maxMs: +v[v.length - 1]!.toFixed(2)}
  }
  const once = (f: () => unknown) => {
    const t0 = performance.now()
    f()
    return +(performance.now() - t0).toFixed(1)
  }
  const whole = {
    classesMs: once(() => classCounts(heap)),
    topMs: once(() => topObjects(heap, new RetentionIndex(heap), 20)),
    topByTypeMs: once(() => topTypes(heap, new RetentionIndex(heap), 20)),
    suspectsMs: once(() => suspectsOf(program, heap, new RetentionIndex(heap), 0.1)),
  }
  const unnamed = unnamedPicks.length ? {findObject: stat(unnamedTimes.find), refs: stat(unnamedTimes.refs), path: stat(unnamedTimes.paths)} : null
  const out: QueryStep = {openMs: Math.round(openMs), findObject: stat(find), refs: stat(refs), path: stat(paths), dominators: stat(dominators), unnamed, unnamedSample: unnamedPicks.length, unnamedExample: unnamedPicks.length ? '0x' + unnamedPicks[0]!.toString(16) : null, ...whole, sample: picks.length, example: '0x' + picks[0]!.toString(16)}
  console.log(JSON.stringify(out))
}
