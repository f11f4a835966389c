import net from 'node:net'
import os from 'node:os'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cookieName, tokenMatches} from '../../src/serve/access.js'
import {isLoopback, parseListen} from '../../src/serve/listen-address.js'
import {LEGEND_STYLES} from '../../src/report/html/states-bar.js'
import {SCRIPT_PATHS} from '../../src/serve/links.js'
import {request, serveFixture, type Answer, type ServedFixture} from '../helpers/serve-fixture.js'

// toma serve's defences, each attacked over real HTTP on a fixture core served in this process.
const ID = 'v2.10-shared'

function expectSecurityHeaders(a: Answer) {
  const csp = String(a.headers['content-security-policy'])
  for (const part of ["default-src 'none'", "script-src 'self'", "img-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(part)
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/)
  expect(a.headers['x-content-type-options']).toBe('nosniff')
  expect(a.headers['referrer-policy']).toBe('no-referrer')
  expect(a.headers['cache-control']).toBe('no-store')
}

describe(`toma serve's security on ${ID}`, () => {
  let s: ServedFixture
  let token: string
  let port: number
  beforeAll(async () => {
    s = await serveFixture(ID)
    port = s.server.port
    token = new URL(s.server.url).searchParams.get('token')!
  })
  afterAll(async () => {
    await s?.close()
  })

  it('prints a loopback URL with a 32-byte random token', () => {
    const url = new URL(s.server.url)
    expect(url.hostname).toBe('127.0.0.1')
    expect(url.pathname).toBe('/')
    expect(Buffer.from(token, 'base64url')).toHaveLength(32)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('listens on loopback only: another address of this machine is refused', async () => {
    const other = Object.values(os.networkInterfaces()).flat().find(a => a && a.family === 'IPv4' && !a.internal)?.address
    if (!other) return
    const refused = await new Promise<string>(resolve => {
      const c = net.connect({host: other, port}, () => {
        c.destroy()
        resolve('connected')
      })
      c.on('error', e => resolve((e as NodeJS.ErrnoException).code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
  })

  it('--listen takes IP addresses only, and tells loopback from the rest', () => {
    expect(parseListen('127.0.0.1:8080')).toEqual({host: '127.0.0.1', port: 8080})
    expect(parseListen('[::1]:0')).toEqual({host: '::1', port: 0})
    for (const bad of ['localhost:80', 'evil.com:80', '127.0.0.1', '127.0.0.1:65536', '1.2.3:80', '[127.0.0.1]:80', '::1:80', '127.0.0.1:80x']) expect(() => parseListen(bad), bad).toThrow(/--listen/)
    expect(isLoopback('127.0.0.1') && isLoopback('127.1.2.3') && isLoopback('::1')).toBe(true)
    expect(isLoopback('0.0.0.0') || isLoopback('::') || isLoopback('192.168.1.1')).toBe(false)
  })

  it('refuses every request without the token, whatever it asks for', async () => {
    for (const path of ['/', '/classes', '/class?id=1', '/search?q=0x1', SCRIPT_PATHS.report, '/static/style.css', '/no-such-page']) {
      const a = await request(port, {path})
      expect(a.status, path).toBe(403)
      expect(a.body).not.toContain('app::')
      expectSecurityHeaders(a)
    }
  })

  it('refuses a wrong token: one character changed, shorter, longer, empty; and a wrong cookie', async () => {
    const changed = (token[0] === 'A' ? 'B' : 'A') + token.slice(1)
    for (const t of [changed, token.slice(0, -1), `${token}A`, '', token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase()]) {
      const a = await request(port, {path: `/?token=${encodeURIComponent(t)}`})
      expect(a.status, t).toBe(403)
      expect(a.headers['set-cookie']).toBeUndefined()
    }
    for (const cookie of [`${cookieName(port)}=${changed}`, `${cookieName(port + 1)}=${token}`, `toma=${token}`, `${cookieName(port)}=`]) {
      expect((await request(port, {path: '/', headers: {cookie}})).status, cookie).toBe(403)
    }
    expect(tokenMatches(token, token)).toBe(true)
    expect(tokenMatches(changed, token) || tokenMatches(undefined, token) || tokenMatches(token.slice(1), token) || tokenMatches(`${token}x`, token)).toBe(false)
  })

  it('swaps a valid token for an HttpOnly, SameSite=Strict cookie and a redirect to the URL without it', async () => {
    const a = await request(port, {path: `/classes?filter=Box&token=${token}&sort=name`})
    expect(a.status).toBe(303)
    expect(a.headers.location).toBe('/classes?filter=Box&sort=name')
    const cookie = String(a.headers['set-cookie']?.[0])
    expect(cookie).toBe(`${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`)
    expectSecurityHeaders(a)
    const page = await request(port, {path: a.headers.location!, headers: {cookie: cookie.split(';')[0]!}})
    expect(page.status).toBe(200)
    expect(page.body).toContain('app::Box&lt;int&gt;')
  })

  it('answers only to its own Host (DNS rebinding)', async () => {
    for (const host of [`evil.example:${port}`, `127.0.0.1:${port + 1}`, '127.0.0.1', `localhost.evil.example:${port}`, `127.0.0.2:${port}`, `[::2]:${port}`]) {
      const a = await request(port, {path: '/', host, headers: {cookie: s.cookie}})
      expect(a.status, host).toBe(421)
      expect(a.body).not.toContain('app::')
      expectSecurityHeaders(a)
    }
    // A request with no Host at all (HTTP/1.0 style).
    const raw = await new Promise<string>(resolve => {
      const c = net.connect({host: '127.0.0.1', port}, () => c.end(`GET / HTTP/1.0\r\nCookie: ${s.cookie}\r\n\r\n`))
      let text = ''
      c.setEncoding('utf8').on('data', d => (text += d))
      c.on('end', () => resolve(text))
    })
    expect(raw).toMatch(/^HTTP\/1\.1 421/)
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      expect((await request(port, {path: '/', host, headers: {cookie: s.cookie}})).status, host).toBe(200)
    }
  })

  it('answers GET and HEAD only', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']) {
      const a = await request(port, {path: '/', method, headers: {cookie: s.cookie}})
      expect(a.status, method).toBe(405)
      expect(a.headers.allow).toBe('GET, HEAD')
      expectSecurityHeaders(a)
    }
    const head = await request(port, {path: '/', method: 'HEAD', headers: {cookie: s.cookie}})
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
    expect(Number(head.headers['content-length'])).toBeGreaterThan(1000)
  })

  it('reads no file a URL names: unknown and traversing paths are 404 (or 400)', async () => {
    for (const path of ['/etc/passwd', '/../../../../etc/passwd', '/static/../../package.json', '/static/', '/static/report.js/', '/%2e%2e/%2e%2e/etc/passwd', '/static/..%2fpackage.json', '/index.html', '/Classes', '/classes/']) {
      const a = await s.get(path)
      expect([400, 404], path).toContain(a.status)
      expect(a.body).not.toMatch(/root:x:0|"devDependencies"/)
      expectSecurityHeaders(a)
    }
    expect((await s.get('//evil.example/')).status).toBe(400)
    // Paths that parse as another host, or to a path a redirect would take for one, even with the token.
    for (const path of ['/.//evil.example/x', '/\\evil.example/x', '/./\\evil.example/']) {
      expect((await s.get(path)).status, path).toBe(400)
      const entered = await request(port, {path: `${path}?token=${token}`})
      expect(entered.status, path).toBe(400)
      expect(entered.headers.location).toBeUndefined()
    }
  })

  it('sends the CSP with every page, and no page holds an inline script, a handler or an unhashed style', async () => {
    const hashed = new Set(LEGEND_STYLES)
    for (const path of ['/', '/classes', '/class?id=1', '/leaks', '/suspects', '/threads', '/memory', '/damage', '/diff', '/search?q=Box', '/search?q=%3Cscript%3Ealert(1)%3C/script%3E']) {
      const a = await s.get(path)
      expect(a.status, path).toBe(200)
      expect(a.headers['content-type']).toBe('text/html; charset=utf-8')
      expectSecurityHeaders(a)
      const scripts = [...a.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
      expect(scripts.map(m => /src="([^"]+)"/.exec(m[1]!)?.[1])).toEqual([SCRIPT_PATHS.report, SCRIPT_PATHS.serve])
      expect(scripts.every(m => m[2] === '')).toBe(true)
      expect(a.body, path).not.toMatch(/\son[a-z]+\s*=|javascript:/i)
      for (const m of a.body.matchAll(/\sstyle="([^"]*)"/g)) expect(hashed.has(m[1]!), `${path}: style="${m[1]}"`).toBe(true)
    }
    for (const path of [SCRIPT_PATHS.report, SCRIPT_PATHS.serve, '/static/style.css']) {
      const a = await s.get(path)
      expect(a.status).toBe(200)
      expect(a.headers['content-type']).toMatch(path.endsWith('.css') ? /^text\/css/ : /^text\/javascript/)
      expectSecurityHeaders(a)
    }
  })

  it('escapes every byte from the core and from the URL', async () => {
    const classes = await s.get('/classes?filter=box')
    expect(classes.body).toContain('app::Box&lt;int&gt;')
    expect(classes.body).not.toContain('app::Box<int>')
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    for (const path of [`/search?q=${encodeURIComponent(hostile)}`, `/classes?filter=${encodeURIComponent(hostile)}`]) {
      const a = await s.get(path)
      expect(a.status).toBe(200)
      expect(a.body).not.toContain('<img')
      expect(a.body).not.toContain('<script>alert')
      expect(a.body).toContain('&lt;script&gt;alert(2)&lt;/script&gt;')
    }
    // A parameter that is not one is said back escaped, with a 400.
    const bad = await s.get(`/class?id=${encodeURIComponent('<b>1')}`)
    expect(bad.status).toBe(400)
    expect(bad.body).toContain('&lt;b&gt;1')
  })
})
