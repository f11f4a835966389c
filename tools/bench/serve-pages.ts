// Times every page of `toma serve` on one index: the server started in this process (port 0), each
// URL fetched twice in a row, first and second GET (wall ms, the whole body read), as a table. The
// first GET of each URL is its first load in this process (pages computed once are kept: the
// second GET shows that); the URLs run in the order listed, so later pages find the span table
// and whatever earlier pages read already in memory, as a user browsing would. Then `toma serve`
// as a whole command, timed from its start to the URL it prints. A page that does not answer
// (a 404 of a page not in this build, a 500) is a failure line of the result, not the tool's end.
// `npm run bench` runs it on the index it made (tools/bench/bench.ts, with --json).
//   node dist/tools/bench/serve-pages.js CORE_OR_INDEX [--exe EXE] [--tcmalloc LIB] [--index INDEX] [--json]
import {spawn} from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import {openIndex} from '../../src/cli/open-index.js'
import {hex} from '../../src/errors.js'
import type {HeapIndex} from '../../src/index/heap-index.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {classCounts} from '../../src/queries/classes.js'
import {classHref, classesHref, dominatedJsonHref, dominatorsHref, leaksHref, objectHref, searchHref, untypedClassHref} from '../../src/serve/links.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import type {ServeContext} from '../../src/serve/serve-page.js'
import {startServer} from '../../src/serve/server.js'
import {typeIdOf} from '../../src/serve/type-ids.js'
import {isMain, root} from '../project-root.js'

/** One URL's two loads. `ok`: it answered as a page does (200, or the search's 303 to an object). */
export interface PageTime {
  url: string
  status: number
  firstMs: number
  secondMs: number
  bytes: number
  ok: boolean
}

export interface ServePagesResult {
  /** startServer in this process, until it listens (what the server does before its URL is printed). */
  startMs: number
  /** `toma serve INDEX` as a whole command: from its start to the URL on its stdout (null: not measured). */
  urlPrintedMs: number | null
  pages: PageTime[]
  /** `URL: status` of each page that did not answer. */
  failures: string[]
  /** The slowest first load of the pages that answered, and its URL. */
  slowestFirstMs: number
  slowestUrl: string
}

interface Got {
  status: number
  ms: number
  body: string
  cookie?: string
}

function get(port: number, urlPath: string, cookie?: string): Promise<Got> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    const req = http.get({host: '127.0.0.1', port, path: urlPath, headers: cookie ? {cookie} : {}}, res => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, ms: performance.now() - t0, body: Buffer.concat(parts).toString('utf8'), cookie: res.headers['set-cookie']?.[0]?.split(';')[0]}))
    })
    req.on('error', reject)
  })
}

/**
 * The URLs timed, from the index itself: every page without parameters, the class with the most
 * objects and the one with the fewest, a page of the latter past its last object (the scan's worst
 * case), the largest untyped size class, searches (an address inside the object retaining the
 * most, a part of a name, a symbol), the object retaining the most and its dominator subtree
 * (the object and dominator pages whether or not this build has them: a 404 is a failure line).
 */
export function sampleUrls(index: HeapIndex): string[] {
  const counts = classCounts(index)
  const byObjects = [...counts.types].sort((a, b) => b.objects - a.objects)
  const most = byObjects.length ? typeIdOf(index, byObjects[0]!.type) : undefined
  const fewest = byObjects.length ? typeIdOf(index, byObjects[byObjects.length - 1]!.type) : undefined
  // A mid-sized class: its later pages were the ones that could read to the end.
  const middle = byObjects.length ? typeIdOf(index, byObjects[Math.floor(byObjects.length / 2)]!.type) : undefined
  const untyped = counts.untyped[0]
  const topSlot = index.holds('graph') ? new RetentionIndex(index).top(1)[0] : undefined
  const topAddress = topSlot === undefined ? undefined : index.object(topSlot).start
  const parameterized: Record<string, string[]> = {
    '/class': [
      ...(most === undefined ? [] : [classHref(most)]),
      ...(middle === undefined || middle === most ? [] : [classHref(middle)]),
      ...(fewest === undefined ? [] : [classHref(fewest), classHref(fewest, index.nameCounts()['type.firstLive'][fewest]! + 1)]),
      ...(untyped ? [untypedClassHref(untyped.sizeClass)] : []),
    ],
    '/search': [searchHref(topAddress === undefined ? '0x1000' : hex(topAddress + 8)), ...(byObjects.length ? [searchHref(byObjects[0]!.type.slice(0, 4))] : []), searchHref('main')],
    '/object': topAddress === undefined ? [] : [objectHref(topAddress)],
    '/dominators': [dominatorsHref(), ...(topSlot === undefined ? [] : [dominatorsHref(topSlot)])],
    '/api/dominated': [dominatedJsonHref(undefined), ...(topSlot === undefined ? [] : [dominatedJsonHref(topSlot)])],
  }
  const urls: string[] = []
  for (const p of SERVE_PAGES) urls.push(...(parameterized[p.path] ?? [p.path]))
  // The other helper's pages, timed (or failing) before they are in the routes.
  for (const [p, u] of Object.entries(parameterized)) if (!SERVE_PAGES.some(s => s.path === p)) urls.push(...u)
  urls.push(classesHref({sort: 'name'}), leaksHref(2))
  return urls
}

/** Each URL fetched twice in a row with the cookie; then the second page of the first class page's list, by its next link. */
export async function timeUrls(port: number, cookie: string, urls: readonly string[]): Promise<PageTime[]> {
  const rows: PageTime[] = []
  const time = async (u: string) => {
    const first = await get(port, u, cookie)
    const second = await get(port, u, cookie)
    rows.push({url: u, status: first.status, firstMs: first.ms, secondMs: second.ms, bytes: Buffer.byteLength(first.body), ok: first.status === 200 || first.status === 303})
    return first
  }
  for (const u of urls) {
    const first = await time(u)
    const next = /href="([^"]*)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&')
    // Each class's next page (a cursor past the first page), where it has one.
    if (u.startsWith('/class?') && !u.includes('from=') && next) await time(next)
  }
  return rows
}

/** `toma serve` as a user starts it: from the process's start to the URL on its stdout, then stopped with SIGINT. */
export function urlPrintedMs(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, [path.join(root, 'bin/run.js'), 'serve', ...args], {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    let ms: number | undefined
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (ms === undefined && out.includes('\n')) {
        ms = performance.now() - t0
        child.kill('SIGINT')
      }
    })
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('exit', code => (ms === undefined ? reject(new Error(`toma serve exited ${code} before printing its URL: ${err.trim()}`)) : resolve(ms)))
  })
}

/** Starts the server on `ctx` in this process, times every sample URL, then `toma serve` itself when `serveArgs` are given. */
export async function servePageTimes(ctx: ServeContext, serveArgs: readonly string[] | null): Promise<ServePagesResult> {
  const started = performance.now()
  const server = await startServer(ctx, SERVE_PAGES, {host: '127.0.0.1', port: 0})
  const startMs = performance.now() - started
  let pages: PageTime[]
  try {
    // In through the printed URL, as a browser: its cookie for every request after.
    const entry = await get(server.port, new URL(server.url).pathname + new URL(server.url).search)
    pages = await timeUrls(server.port, entry.cookie!, sampleUrls(ctx.core.index))
  } finally {
    await server.close()
  }
  const answered = pages.filter(p => p.ok)
  const slowest = answered.reduce<PageTime | undefined>((w, p) => (!w || p.firstMs > w.firstMs ? p : w), undefined)
  return {
    startMs,
    urlPrintedMs: serveArgs ? await urlPrintedMs(serveArgs) : null,
    pages,
    failures: pages.filter(p => !p.ok).map(p => `${p.url}: ${p.status}`),
    slowestFirstMs: slowest?.firstMs ?? 0,
    slowestUrl: slowest?.url ?? '',
  }
}

/** The result as Markdown: a row a URL, then the start-up and the failures. */
export function servePagesMarkdown(r: ServePagesResult): string {
  const ms = (v: number) => v.toFixed(1)
  return [
    '| page | status | first load | second load | bytes |',
    '|---|---|---|---|---|',
    ...r.pages.map(p => `| \`${p.url}\` | ${p.status}${p.ok ? '' : ' (failed)'} | ${ms(p.firstMs)} ms | ${ms(p.secondMs)} ms | ${p.bytes} |`),
    '',
    `Slowest first load ${ms(r.slowestFirstMs)} ms (\`${r.slowestUrl}\`); the server's start in-process ${ms(r.startMs)} ms; \`toma serve\` printed its URL ${r.urlPrintedMs === null ? 'n/a' : `${ms(r.urlPrintedMs)} ms`} after it started.${r.failures.length ? ` Failed: ${r.failures.map(f => `\`${f}\``).join(', ')}.` : ''}`,
  ].join('\n')
}

if (isMain(import.meta.url)) {
  const argv = process.argv.slice(2)
  const flag = (name: string) => {
    const at = argv.indexOf(`--${name}`)
    return at >= 0 ? argv[at + 1] : undefined
  }
  const core = argv[0]
  if (!core || core.startsWith('--')) {
    console.error('usage: node dist/tools/bench/serve-pages.js CORE_OR_INDEX [--exe EXE] [--tcmalloc LIB] [--index INDEX] [--json]')
    process.exit(2)
  }
  const opened = await openIndex(core, {exe: flag('exe'), tcmalloc: flag('tcmalloc'), index: flag('index')}, line => console.error(`toma: ${line}`))
  const ctx: ServeContext = {core: {index: opened.index, corePath: opened.corePath, indexPath: opened.indexPath, program: opened.program}, toolVersion: 'bench'}
  const serveArgs = [core, ...['exe', 'tcmalloc', 'index'].flatMap(f => (flag(f) ? [`--${f}`, flag(f)!] : []))]
  const result = await servePageTimes(ctx, serveArgs)
  opened.index.close()
  if (argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    const width = Math.max(...result.pages.map(r => r.url.length), 3)
    console.log(`${'url'.padEnd(width)}  status  first ms  second ms     bytes`)
    for (const p of result.pages) console.log(`${p.url.padEnd(width)}  ${String(p.status).padStart(6)}  ${p.firstMs.toFixed(1).padStart(8)}  ${p.secondMs.toFixed(1).padStart(9)}  ${String(p.bytes).padStart(8)}${p.ok ? '' : '  FAILED'}`)
    console.log(`server start in-process (before the URL is printed): ${result.startMs.toFixed(1)} ms; toma serve printed its URL after ${result.urlPrintedMs?.toFixed(1)} ms`)
    console.log(`slowest first load: ${result.slowestFirstMs.toFixed(1)} ms (${result.slowestUrl})`)
    for (const f of result.failures) console.log(`failed: ${f}`)
  }
}
