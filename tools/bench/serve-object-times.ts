import {openIndex} from '../../src/cli/open-index.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {objectPage} from '../../src/serve/pages/object.js'
import {dominatedJsonPage} from '../../src/serve/pages/dominated-json.js'
import {dominatorsPage} from '../../src/serve/pages/dominators.js'
import type {PageAnswer, ServeContext} from '../../src/serve/serve-page.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {retentionOf} from '../../src/serve/served-retention.js'

// How long `toma serve`'s object page and the dominator tree's expansion take to answer, in this
// process, from the first request on (the server opens the index once, then answers):
//   node dist/tools/bench/serve-object-times.js INDEX [SAMPLES] [SEED]
// Runs the pages' prepare as the server does before it prints its URL, then times the object
// retaining the most first (the first load), then the tree's top, its JSON, and
// SAMPLES random live objects' pages and expansions; prints each, then the median and maximum.

const [indexPath, samplesArg, seedArg] = process.argv.slice(2)
if (!indexPath) throw new Error('usage: serve-object-times INDEX [SAMPLES] [SEED]')
const samples = Number(samplesArg ?? 20)
let seed = Number(seedArg ?? 1)
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)

const opened = await openIndex(indexPath, {}, line => console.error(line))
const ctx: ServeContext = {core: opened, toolVersion: 'bench'}
const index = opened.index
const retention = new RetentionIndex(index)

// What the server does before it prints its URL (server.ts): every page's prepare.
const prepared = performance.now()
for (const p of SERVE_PAGES) p.prepare?.(ctx)
console.log(`${(performance.now() - prepared).toFixed(1).padStart(8)} ms  the pages' prepare (before the URL is printed)`)

const times: Record<string, number[]> = {}
async function timed(kind: string, path: string): Promise<PageAnswer> {
  const t0 = performance.now()
  const a = await (path.startsWith('/object') ? objectPage : path.startsWith('/api') ? dominatedJsonPage : dominatorsPage).answer(ctx, new URL(`http://bench${path}`))
  const ms = performance.now() - t0
  ;(times[kind] ??= []).push(ms)
  console.log(`${ms.toFixed(1).padStart(8)} ms  ${kind.padEnd(14)} ${path}  ${a.kind}`)
  return a
}

const largest = retention.top(1)[0]!
const at = `0x${index.object(largest).start.toString(16)}`
await timed('object', `/object?addr=${at}`)
await timed('expand', `/api/dominated?id=${largest}`)
await timed('dominators', '/dominators')
await timed('expand', '/api/dominated')
// Deep pages of the largest object's lists: its referents and its children far down.
await timed('object', `/object?addr=${at}&out=100000&kids=1000`)
await timed('expand', `/api/dominated?id=${largest}&page=100000`)
await timed('dominators', `/dominators?id=${largest}`)
for (let found = 0; found < samples; ) {
  const slot = Math.floor(random() * index.objectCount)
  if (index.state(slot) !== 'live') continue
  found++
  await timed('object', `/object?addr=0x${index.object(slot).start.toString(16)}`)
  await timed('expand', `/api/dominated?id=${slot}`)
}
// A leaked object, if the first million random slots hold one: its page searches back for where the leak starts.
for (let tries = 0; tries < 1_000_000; tries++) {
  const slot = Math.floor(random() * index.objectCount)
  if (index.state(slot) !== 'live' || index.reachability(slot) !== 'leaked') continue
  await timed('object', `/object?addr=0x${index.object(slot).start.toString(16)}`)
  break
}
// What a leaked object's search back through referrers costs a step (object.ts LEAK_SEARCH_VISITS).
const served = retentionOf(index)
const steps = Array.from({length: 10_000}, () => Math.floor(random() * index.objectCount))
const walked = performance.now()
for (const id of steps) served.referrers(id)
console.log(`${(performance.now() - walked).toFixed(1).padStart(8)} ms  10,000 referrers() of random slots`)
for (const [kind, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b)
  console.log(`${kind}: ${list.length} answers, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms, first ${list[0]!.toFixed(1)} ms`)
}
