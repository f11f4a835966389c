import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {currentTable, type BenchEntry} from '../../tools/bench/bench-log.js'
import {servePageTimes, servePagesMarkdown, type ServePagesResult} from '../../tools/bench/serve-pages.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {serveFixture, type ServedFixture} from '../helpers/serve-fixture.js'

// The serve step of `npm run bench` (tools/bench/serve-pages.ts), run alone on a fixture core:
// every page timed, a page that does not answer recorded as a failure, and the figures in the
// bench's table.
describe("the bench's serve step", () => {
  let s: ServedFixture
  let r: ServePagesResult
  beforeAll(async () => {
    s = await serveFixture('v2.10-shared')
    r = await servePageTimes(s.ctx, null)
  })
  afterAll(async () => {
    await s?.close()
  })

  it("times every page of the routes, the class page's next page, and the object and dominator pages", () => {
    const paths = new Set(r.pages.map(p => new URL(p.url, 'http://x').pathname))
    for (const p of SERVE_PAGES) expect(paths, p.path).toContain(p.path)
    for (const p of ['/object', '/dominators', '/api/dominated']) expect(paths, p).toContain(p)
    expect(r.pages.some(p => p.url.startsWith('/class?') && p.url.includes('from='))).toBe(true)
    for (const p of r.pages) expect(p.firstMs, p.url).toBeGreaterThan(0)
    expect(r.startMs).toBeGreaterThan(0)
  })

  it('records a page that does not answer as a failure line, the others as answered', () => {
    for (const p of r.pages) {
      const answered = p.status === 200 || p.status === 303
      expect(p.ok, p.url).toBe(answered)
      expect(r.failures.includes(`${p.url}: ${p.status}`), p.url).toBe(!answered)
    }
    // Pages of the routes all answer; the slowest is one of them.
    for (const p of r.pages.filter(x => SERVE_PAGES.some(sp => sp.path === new URL(x.url, 'http://x').pathname))) expect(p.ok, p.url).toBe(true)
    expect(r.pages.find(p => p.url === r.slowestUrl)?.ok).toBe(true)
  })

  it("goes into the run's section and the table of current figures", () => {
    const md = servePagesMarkdown(r)
    for (const p of r.pages) expect(md).toContain(`| \`${p.url}\` | ${p.status}`)
    const entry: BenchEntry = {date: '2026-12-04T23:00:00Z', scale: 1, command: 'npm run bench -- --scale 1', commit: null, text: md,
      figures: {coreGiB: 0.1, objects: 1, analyzeMs: 1, peakRssMiB: 1, threads: 1, indexGiB: 0.1, findObjectMs: 1, versionMs: 1, serveSlowestPageMs: 12.3, serveUrlMs: 456, serveFailures: 2}}
    expect(currentTable([entry])).toContain('| 12 ms; 456 ms; 2 failed |')
  })
})
