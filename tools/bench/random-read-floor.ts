// node dist/tools/bench/random-read-floor.js INDEX [RUNS]: what the memory of this machine charges an
// edge, whatever the analysis does with it. On an index's own edges (edge.to, in the order the scan
// finds them), RUNS times (default 5), three loops that do nothing but read:
//   stream: every edge's target, in order (the edge array read once from start to end);
//   bit:    the target's bit in a bitmap of one bit an object slot (the smallest table a graph
//           pass can look a target up in: the scan's live bits, the searches' "reached yet?");
//   word:   the target's entry in an array of 4 bytes an object slot (pre[], parent[], idom[]);
//   chain:  the same, each read waiting for the one before (its index depends on the last value
//           read, as a DFS's next vertex or a path compression's next link does).
// Each figure is the fastest run, in ns an edge. Run it on two cores' indexes: where the per-edge
// figure grows from one to the other, the analysis's phases that look up a target an edge (the
// scan, the reverse edges, the searches, the dominator pass) cannot take the same time a GiB on
// both, however they are written. Build first.
import {performance} from 'node:perf_hooks'
import {openIndexArgument} from './open-index-argument.js'
import {LIVE} from '../../src/heap/states.js'

const [indexPath, runsArg] = process.argv.slice(2)
const index = openIndexArgument(indexPath, 'node dist/tools/bench/random-read-floor.js INDEX [RUNS]')
const to = index.array('edge.to') as unknown as Uint32Array
const state = index.array('object.state') as unknown as Uint8Array
index.close()
const objects = state.length
const bits = new Int32Array(Math.ceil(objects / 32))
for (let o = 0; o < objects; o++) if (state[o] === LIVE) bits[Math.floor(o / 32)]! |= 1 << o % 32
// One entry more than the slots: chain's index may be a target's id with its lowest bit flipped.
const words = new Uint32Array(objects + 1)
for (let o = 0; o < objects; o++) words[o] = objects - o

// The sums are XORs of object ids (below 2^31: 32-bit arithmetic is exact), only so that no loop is optimised away.
const loops = {
  stream(): number {
    let sum = 0
    for (let e = 0; e < to.length; e++) sum ^= to[e]!
    return sum
  },
  bit(): number {
    let set = 0
    for (let e = 0; e < to.length; e++) {
      const t = to[e]!
      if ((bits[t >>> 5]! & (1 << (t & 31))) !== 0) set++
    }
    return set
  },
  word(): number {
    let sum = 0
    for (let e = 0; e < to.length; e++) sum ^= words[to[e]!]!
    return sum
  },
  chain(): number {
    let last = 0
    for (let e = 0; e < to.length; e++) last = words[to[e]! ^ (last & 1)]!
    return last
  },
}
const runs = Number(runsArg ?? 5)
const best: Record<string, number> = {}
const results: Record<string, number> = {}
for (let r = 0; r < runs; r++) {
  for (const [name, loop] of Object.entries(loops)) {
    const t = performance.now()
    results[name] = loop()
    const ms = performance.now() - t
    best[name] = Math.min(best[name] ?? Infinity, ms)
  }
}
const nsPerEdge = Object.fromEntries(Object.entries(best).map(([k, ms]) => [k, Math.round((ms * 1e6 * 100) / Math.max(1, to.length)) / 100]))
console.log(JSON.stringify({objects, edges: to.length, runs, bestMs: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v)])), nsPerEdge, results}))
