import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {html} from '../report/html/html.js'
import {TOKEN_PARAM, cookieName, cookieValue, newToken, tokenCookie, tokenMatches} from './access.js'
import {allowedHosts, hostAllowed} from './host-check.js'
import {layoutPage, navEntries} from './layout.js'
import type {ListenAddress} from './listen-address.js'
import {BadParameter} from './params.js'
import {SECURITY_HEADERS} from './response-headers.js'
import type {PageAnswer, ServeContext, ServePage} from './serve-page.js'
import {STATIC_FILES} from './static-files.js'

/** A running server: its URL with the token (the one line `toma serve` prints), and how to stop it. */
export interface RunningServer {
  url: string
  port: number
  close(): Promise<void>
}

interface Reply {
  status: number
  type?: string
  body?: string
  headers?: Record<string, string>
}

const HTML = 'text/html; charset=utf-8'

/**
 * Starts the HTTP server of `toma serve` on `listen` (port 0: a free one) with a new token. It
 * answers GET and HEAD only, to a request whose Host is its own (DNS rebinding) and that holds
 * the token (the URL's `?token=`, which is swapped for a cookie at once, or the cookie); then
 * nothing but `pages` (exact paths), their JSON and the static files compiled into toma. It reads
 * the index and the core and writes nothing.
 */
export async function startServer(ctx: ServeContext, pages: readonly ServePage[], listen: ListenAddress): Promise<RunningServer> {
  const token = newToken()
  const byPath = new Map(pages.map(p => [p.path, p]))
  const nav = navEntries(pages)
  let hosts = new Set<string>()
  let port = 0
  const server = http.createServer((req, res) => {
    answer(req)
      .catch((e: unknown) => ({status: 500, type: HTML, body: refusal(`this page failed: ${e instanceof Error ? e.message : String(e)}`)}))
      .then(r => send(req, res, r))
  })

  const refusal = (message: string) => html`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>toma serve</title></head><body><p>${message}</p></body></html>`.text

  async function answer(req: http.IncomingMessage): Promise<Reply> {
    if (!hostAllowed(req.headers.host, hosts)) return {status: 421, type: HTML, body: refusal('This server answers only to its own address (the Host header names another).')}
    if (req.method !== 'GET' && req.method !== 'HEAD') return {status: 405, type: HTML, body: refusal('Only GET and HEAD.'), headers: {Allow: 'GET, HEAD'}}
    const target = req.url ?? ''
    // A path only, which stays a path of this server once parsed: `//evil` and `/\evil` name another
    // host, and `/.//evil` parses to the path `//evil`, which a redirect to it would take for one.
    const url = target.startsWith('/') && !target.startsWith('//') && !target.includes('\\') ? new URL(target, `http://${req.headers.host}`) : null
    if (!url || url.pathname.startsWith('//')) return {status: 400, type: HTML, body: refusal('Bad request target.')}
    const given = url.searchParams.get(TOKEN_PARAM)
    if (given !== null) {
      if (!tokenMatches(given, token)) return {status: 403, type: HTML, body: refusal('Wrong token: open the URL toma serve printed.')}
      url.searchParams.delete(TOKEN_PARAM)
      return {status: 303, headers: {Location: url.pathname + url.search, 'Set-Cookie': tokenCookie(port, token)}}
    }
    if (!tokenMatches(cookieValue(req.headers.cookie, cookieName(port)), token)) return {status: 403, type: HTML, body: refusal('No access: open the URL toma serve printed (it holds the token).')}
    const file = STATIC_FILES.get(url.pathname)
    if (file) return {status: 200, type: file.type, body: file.body}
    const page = byPath.get(url.pathname)
    if (!page) return {status: 404, type: HTML, body: layoutPage(ctx, nav, '', 'Not found', html`<p class="missing">No page at ${url.pathname}.</p>`)}
    try {
      return pageReply(url, await page.answer(ctx, url))
    } catch (e) {
      if (!(e instanceof BadParameter)) throw e
      return {status: 400, type: HTML, body: layoutPage(ctx, nav, url.pathname, 'Bad request', html`<p class="missing">${e.message}</p>`)}
    }
  }

  function pageReply(url: URL, a: PageAnswer): Reply {
    // The navigation entry lit: the page's own, or the section it belongs to.
    const here = byPath.get(url.pathname)?.section ?? url.pathname
    switch (a.kind) {
      case 'page':
        return {status: 200, type: HTML, body: layoutPage(ctx, nav, here, a.title, a.body)}
      case 'json':
        return {status: 200, type: 'application/json; charset=utf-8', body: JSON.stringify(a.value)}
      case 'missing':
        return {status: 404, type: HTML, body: layoutPage(ctx, nav, here, 'Not found', html`<p class="missing">${a.message}</p>`)}
      case 'redirect':
        // Only to a page of this server: a path, never another origin.
        if (!a.location.startsWith('/') || a.location.startsWith('//')) throw new Error(`redirect to ${a.location} is not a path of this server`)
        return {status: 303, headers: {Location: a.location}}
    }
  }

  for (const p of pages) p.prepare?.(ctx)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  port = (server.address() as AddressInfo).port
  hosts = allowedHosts(listen.host, port)
  const hostPart = listen.host.includes(':') ? `[${listen.host}]` : listen.host
  return {
    url: `http://${hostPart}:${port}/?${TOKEN_PARAM}=${token}`,
    port,
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function send(req: http.IncomingMessage, res: http.ServerResponse, r: Reply): void {
  const body = r.body === undefined ? undefined : Buffer.from(r.body, 'utf8')
  res.writeHead(r.status, {
    ...SECURITY_HEADERS,
    ...(r.type ? {'Content-Type': r.type} : {}),
    'Content-Length': String(body?.length ?? 0),
    ...r.headers,
  })
  res.end(req.method === 'HEAD' ? undefined : body)
}
