// Child of scripts/bench.js: runs one measured step in a fresh process so that its peak RSS is its own.
//   node scripts/bench-run.js analyze CORE INDEX [--workers N] [--no-retention]
//   node scripts/bench-run.js query CORE INDEX N
import {performance} from 'node:perf_hooks'

const [step, core, index, n] = process.argv.slice(2)
const dist = new URL('../dist/src/', import.meta.url)
const phases = []
let current = null
const progress = phase => {
  if (current?.phase === phase) return
  const now = performance.now()
  if (current) phases.push({phase: current.phase, ms: Math.round(now - current.start)})
  current = {phase, start: now}
}

if (step === 'analyze') {
  const {analyzeCore} = await import(new URL('analysis/analyze-core.js', dist))
  const t0 = performance.now()
  progress('open core and module files')
  const flag = name => process.argv.indexOf(name)
  const workers = flag('--workers') > 0 ? Number(process.argv[flag('--workers') + 1]) : undefined
  const a = analyzeCore(core, {}, progress, index, undefined, {workers, retention: flag('--no-retention') < 0})
  progress('done')
  const totalMs = Math.round(performance.now() - t0)
  const s = a.summary
  console.log(JSON.stringify({
    totalMs,
    phases,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    threads: a.threadsUsed,
    objects: a.heap.spans.totalObjects,
    live: s.states[0].objects,
    liveBytes: s.states[0].bytes,
    edges: s.graph.edges,
    crossCheckEqual: s.crossCheck.every(c => c.equal),
    warnings: s.warnings.total,
  }))
} else if (step === 'query') {
  const {IndexFile} = await import(new URL('index/index-file.js', dist))
  const {HeapIndex} = await import(new URL('index/heap-index.js', dist))
  const {Core} = await import(new URL('core/core.js', dist))
  const {Program} = await import(new URL('program/program.js', dist))
  const {objectInfo} = await import(new URL('analysis/object-info.js', dist))
  const {refsOf} = await import(new URL('analysis/refs.js', dist))
  const {RetentionIndex} = await import(new URL('index/retention-index.js', dist))
  const {pathsTo} = await import(new URL('analysis/paths.js', dist))
  const {dominatedBy} = await import(new URL('analysis/dominated.js', dist))
  const {topObjects, topTypes} = await import(new URL('analysis/top.js', dist))
  const {suspectsOf} = await import(new URL('analysis/suspects.js', dist))
  let t = performance.now()
  const heap = new HeapIndex(IndexFile.open(index))
  const program = Program.load(Core.open(core), heap.meta.options)
  heap.useCore(program.core.memory, core)
  const openMs = performance.now() - t
  // Random live objects, chosen with a fixed seed.
  let x = 12345
  const picks = []
  while (picks.length < Number(n)) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const s = x % heap.spanCount
    if (heap.spanLocation[s] !== 0) continue
    const k = x % heap.spanObjectCount[s]
    const id = heap.spanFirstObject[s] + k
    if (heap.state(id) !== 'live') continue
    picks.push(heap.spanStart[s] + k * heap.spanObjectSize[s] + 8)
  }
  const find = []
  const refs = []
  const paths = []
  const dominators = []
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
  const stat = v => {
    v.sort((a, b) => a - b)
    return {medianMs: +v[v.length >> 1].toFixed(2), p95Ms: +v[Math.floor(v.length * 0.95)].toFixed(2), maxMs: +v[v.length - 1].toFixed(2)}
  }
  const once = f => {
    const t0 = performance.now()
    f()
    return +(performance.now() - t0).toFixed(1)
  }
  const whole = {
    topMs: once(() => topObjects(heap, new RetentionIndex(heap), 20)),
    topByTypeMs: once(() => topTypes(heap, new RetentionIndex(heap), 20)),
    suspectsMs: once(() => suspectsOf(program, heap, new RetentionIndex(heap), 0.1)),
  }
  console.log(JSON.stringify({openMs: Math.round(openMs), findObject: stat(find), refs: stat(refs), path: stat(paths), dominators: stat(dominators), ...whole, sample: picks.length, example: '0x' + picks[0].toString(16)}))
}
