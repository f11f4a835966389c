// Times every page of `toma serve` on one index: the server started in this process (port 0), each
// URL fetched twice in a row, first and second GET (wall ms, the whole body read), as a table. The
// first GET of each URL is its first load in this process (pages computed once are kept: the
// second GET shows that); the URLs run in the order listed, so later pages find the span table
// and whatever earlier pages read already in memory, as a user browsing would.
//   node dist/tools/bench/serve-pages.js CORE_OR_INDEX [--exe EXE] [--tcmalloc LIB] [--index INDEX]
import http from 'node:http'
import {openIndex} from '../../src/cli/open-index.js'
import {hex} from '../../src/errors.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {classCounts} from '../../src/queries/classes.js'
import {classHref, classesHref, dominatedJsonHref, dominatorsHref, leaksHref, objectHref, searchHref, untypedClassHref} from '../../src/serve/links.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {startServer} from '../../src/serve/server.js'
import {typeIdOf} from '../../src/serve/type-ids.js'

const argv = process.argv.slice(2)
const flag = (name: string) => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? argv[at + 1] : undefined
}
const core = argv[0]
if (!core || core.startsWith('--')) {
  console.error('usage: node dist/tools/bench/serve-pages.js CORE_OR_INDEX [--exe EXE] [--tcmalloc LIB] [--index INDEX]')
  process.exit(2)
}
const opened = await openIndex(core, {exe: flag('exe'), tcmalloc: flag('tcmalloc'), index: flag('index')}, line => console.error(`toma: ${line}`))
const index = opened.index
const ctx = {core: {index, corePath: opened.corePath, indexPath: opened.indexPath, program: opened.program}, toolVersion: 'bench'}
const started = performance.now()
const server = await startServer(ctx, SERVE_PAGES, {host: '127.0.0.1', port: 0})
// What the server does before it prints its URL: the pages' prepare (page-cache.ts).
const startMs = performance.now() - started

function get(path: string, cookie?: string): Promise<{status: number; ms: number; bytes: number; cookie?: string; location?: string}> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    const req = http.get({host: '127.0.0.1', port: server.port, path, headers: cookie ? {cookie} : {}}, res => {
      let bytes = 0
      res.on('data', (c: Buffer) => (bytes += c.length))
      res.on('end', () => resolve({status: res.statusCode ?? 0, ms: performance.now() - t0, bytes, cookie: res.headers['set-cookie']?.[0]?.split(';')[0], location: res.headers.location}))
    })
    req.on('error', reject)
  })
}

// In through the printed URL, as a browser: its cookie for every request after.
const entry = await get(new URL(server.url).pathname + new URL(server.url).search)
const cookie = entry.cookie!

// Sample URLs of the pages that take parameters, from the index itself (the class with the most
// objects, the one with the fewest, the largest untyped size class, the object retaining the most).
const counts = classCounts(index)
const byObjects = [...counts.types].sort((a, b) => b.objects - a.objects)
const most = typeIdOf(index, byObjects[0]!.type)!
const fewest = typeIdOf(index, byObjects[byObjects.length - 1]!.type)!
const untyped = counts.untyped[0]
const topSlot = index.holds('graph') ? new RetentionIndex(index).top(1)[0] : undefined
const topAddress = topSlot === undefined ? undefined : index.object(topSlot).start
const urls: string[] = []
for (const p of SERVE_PAGES) {
  if (p.path === '/class') {
    // The worst page of a class: a cursor past its last object, where the scan reads every slot after it.
    urls.push(classHref(most), classHref(fewest), classHref(fewest, index.nameCounts()['type.firstLive'][fewest]! + 1))
    if (untyped) urls.push(untypedClassHref(untyped.sizeClass))
  } else if (p.path === '/search') {
    urls.push(searchHref(topAddress === undefined ? '0x1000' : hex(topAddress + 8)), searchHref(byObjects[0]!.type.slice(0, 4)), searchHref('main'))
  } else if (p.path === '/object') {
    if (topAddress !== undefined) urls.push(objectHref(topAddress))
  } else if (p.path === '/api/dominated') {
    urls.push(dominatedJsonHref(undefined), ...(topSlot === undefined ? [] : [dominatedJsonHref(topSlot)]))
  } else if (p.path === '/dominators') {
    urls.push(dominatorsHref(), ...(topSlot === undefined ? [] : [dominatorsHref(topSlot)]))
  } else urls.push(p.path)
}
urls.push(classesHref({sort: 'name'}), leaksHref(2))

const rows: Array<[string, number, number, number, number]> = []
for (const u of urls) {
  const first = await get(u, cookie)
  const second = await get(u, cookie)
  rows.push([u, first.status, first.ms, second.ms, first.bytes])
}
// The second page of the largest class, by its cursor (found in the first page's next link).
const page = await new Promise<string>(resolve => {
  http.get({host: '127.0.0.1', port: server.port, path: classHref(most), headers: {cookie}}, res => {
    let text = ''
    res.on('data', (c: Buffer) => (text += c.toString()))
    res.on('end', () => resolve(text))
  })
})
const nextHref = /href="([^"]*)" rel="next"/.exec(page)?.[1]?.replace(/&amp;/g, '&')
if (nextHref) {
  const first = await get(nextHref, cookie)
  const second = await get(nextHref, cookie)
  rows.push([nextHref, first.status, first.ms, second.ms, first.bytes])
}
await server.close()
index.close()

const width = Math.max(...rows.map(r => r[0].length), 3)
console.log(`${'url'.padEnd(width)}  status  first ms  second ms     bytes`)
for (const [u, status, first, second, bytes] of rows) {
  console.log(`${u.padEnd(width)}  ${String(status).padStart(6)}  ${first.toFixed(1).padStart(8)}  ${second.toFixed(1).padStart(9)}  ${String(bytes).padStart(8)}`)
}
const worst = Math.max(...rows.map(r => r[2]))
console.log(`server start (the pages' prepare, before the URL is printed): ${startMs.toFixed(1)} ms`)
console.log(`slowest first load: ${worst.toFixed(1)} ms (${rows.find(r => r[2] === worst)![0]})`)
