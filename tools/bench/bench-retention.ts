// node dist/tools/bench/bench-retention.js INDEX [RUNS]: times the retention analysis alone on an index's
// graph (e.g. the bench core's, kept with `npm run bench -- --keep`), on this thread, RUNS times
// (default 3): the dominator pass, then the rest (retained sizes, child lists, tallies), as wall
// and CPU milliseconds, with the minimum of each, and a checksum of every result array so that a
// change to the pass can be shown to give the same answers. Build first.
import crypto from 'node:crypto'
import {performance} from 'node:perf_hooks'
import {startRetention} from '../../src/dominators/retention.js'
import {openIndexArgument} from './open-index-argument.js'
import type {ArrayName} from '../../src/index/schema.js'
import {LIVE} from '../../src/heap/states.js'

const [indexPath, runsArg] = process.argv.slice(2)
const index = openIndexArgument(indexPath, 'node dist/tools/bench/bench-retention.js INDEX [RUNS]')
const array = <T extends ArrayBufferView = Uint32Array>(name: ArrayName) => index.array(name) as unknown as T
const state = array<Uint8Array>('object.state')
const n = state.length
const live = Uint8Array.from(state, s => (s === LIVE ? 1 : 0))
const graph = {objectCount: n, outStart: array('edge.outStart'), outTo: array('edge.to'), rootTo: array('root.to'), rootThread: array<Int32Array>('root.thread')}
const reverseEdges = {inStart: array('edge.inStart'), inFrom: array('edge.inFrom')}
const threads = Array.from(array('thread.tid'))
const typeOf = array<Uint16Array>('object.type')
const typeCount = (index.meta as {typeNames: string[]}).typeNames.length + 1
// Each live object's own bytes, from its span's object size.
const shallow = new Float64Array(n)
const first = array('span.firstObject')
const count = array('span.objectCount')
const size = array('span.objectSize')
for (let s = 0; s < first.length; s++) for (let k = 0; k < count[s]; k++) if (live[first[s] + k]) shallow[first[s] + k] = size[s]

const digest = (a: unknown) => crypto.createHash('sha1').update(ArrayBuffer.isView(a) ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : JSON.stringify(a)).digest('hex').slice(0, 12)
const cpuMs = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since)
  return Math.round((c.user + c.system) / 1000)
}
const runs: Array<{dominators: {ms: number; cpuMs: number}; rest: {ms: number; cpuMs: number}}> = []
let checksums
for (let r = 0; r < Number(runsArg ?? 3); r++) {
  let cpu = process.cpuUsage()
  let t = performance.now()
  const pending = startRetention({graph, forward: {edges: {outStart: graph.outStart, outTo: graph.outTo}}, reverse: {edges: reverseEdges}, live, threads}, 1)
  const dominators = {ms: Math.round(performance.now() - t), cpuMs: cpuMs(cpu)}
  cpu = process.cpuUsage()
  t = performance.now()
  const retention = pending.finish(() => ({shallowBytes: shallow.slice(), typeOf, typeCount}))
  const rest = {ms: Math.round(performance.now() - t), cpuMs: cpuMs(cpu)}
  runs.push({dominators, rest})
  checksums = Object.fromEntries(Object.entries(retention).map(([k, v]) => [k, digest(v)]))
}
const min = (f: (r: (typeof runs)[number]) => number) => Math.min(...runs.map(f))
console.log(JSON.stringify({objects: n, edges: graph.outTo.length, runs, min: {dominatorsMs: min(r => r.dominators.ms), dominatorsCpuMs: min(r => r.dominators.cpuMs), restMs: min(r => r.rest.ms), restCpuMs: min(r => r.rest.cpuMs)}, checksums}, null, 1))
