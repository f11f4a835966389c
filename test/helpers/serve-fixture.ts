import http from 'node:http'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {IndexFile} from '../../src/index/index-file.js'
import {Program} from '../../src/program/program.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import type {ServeContext} from '../../src/serve/serve-page.js'
import {startServer, type RunningServer} from '../../src/serve/server.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from './fixture-core.js'
import {sharedAnalysis} from './shared-analysis.js'

export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** One raw HTTP request to the server (any method, any Host), the whole answer read. */
export function request(port: number, o: {path: string; method?: string; headers?: Record<string, string>; host?: string}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers: {...(o.host === undefined ? {} : {host: o.host}), ...o.headers}, setHost: o.host === undefined}, res => {
      let body = ''
      res.setEncoding('utf8').on('data', d => (body += d))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A fixture core served in this process on a free loopback port, with the cookie its printed URL gives. */
export interface ServedFixture {
  ctx: ServeContext
  server: RunningServer
  cookie: string
  /** A GET with the cookie, as the browser sends it after the printed URL. */
  get(path: string): Promise<Answer>
  close(): Promise<void>
}

/** `toma serve` on fixture `id`, in-process: the run's shared index of the core, the pages of the server. */
export async function serveFixture(id: string): Promise<ServedFixture> {
  const entry = fixtureIndex().find(f => f.id === id)
  if (!entry) throw new Error(`no fixture ${id}`)
  const f = fixtureFlags(entry)
  const corePath = await fixtureCorePath(id)
  const indexPath = (await sharedAnalysis(corePath, ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])])).index
  const index = new HeapIndex(IndexFile.open(indexPath)!)
  const program = Program.load(Core.open(corePath), f)
  index.useCore(program.core.memory, corePath)
  const ctx: ServeContext = {core: {index, corePath, indexPath, program: () => program}, toolVersion: 'test'}
  const server = await startServer(ctx, SERVE_PAGES, {host: '127.0.0.1', port: 0})
  const entered = await request(server.port, {path: new URL(server.url).pathname + new URL(server.url).search})
  const cookie = String(entered.headers['set-cookie']?.[0] ?? '').split(';')[0]!
  return {
    ctx,
    server,
    cookie,
    get: path => request(server.port, {path, headers: {cookie}}),
    close: async () => {
      await server.close()
      index.close()
      program.core.close()
    },
  }
}
