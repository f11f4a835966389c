import {openIndex} from '../../src/cli/open-index.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {objectPage} from '../../src/serve/pages/object.js'
import {dominatedJsonPage} from '../../src/serve/pages/dominated-json.js'
import {dominatorsPage} from '../../src/serve/pages/dominators.js'
import type {PageAnswer, ServeContext} from '../../src/serve/serve-page.js'

// How long `toma serve`'s object page and the dominator tree's expansion take to answer, in this
// process, from the first request on (the server opens the index once, then answers):
//   node dist/tools/bench/serve-object-times.js INDEX [SAMPLES] [SEED]
// Times the object retaining the most first (the first load), then the tree's top, its JSON, and
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
await timed('object', `/object?addr=0x${index.object(largest).start.toString(16)}`)
await timed('expand', `/api/dominated?id=${largest}`)
await timed('dominators', '/dominators')
await timed('expand', '/api/dominated')
for (let found = 0; found < samples; ) {
  const slot = Math.floor(random() * index.objectCount)
  if (index.state(slot) !== 'live') continue
  found++
  await timed('object', `/object?addr=0x${index.object(slot).start.toString(16)}`)
  await timed('expand', `/api/dominated?id=${slot}`)
}
for (const [kind, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b)
  console.log(`${kind}: ${list.length} answers, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms, first ${list[0]!.toFixed(1)} ms`)
}
