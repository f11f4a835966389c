import fs from 'node:fs'
import path from 'node:path'
import puppeteer, {type Browser, type Page} from 'puppeteer-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {hex} from '../../src/errors.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {childrenBySize} from '../../src/queries/dominated.js'
import {pathsTo} from '../../src/queries/paths.js'
import {classCounts} from '../../src/queries/classes.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {PAGE_ROWS, type ServeContext} from '../../src/serve/serve-page.js'
import {startServer, type RunningServer} from '../../src/serve/server.js'
import {findChromium} from '../helpers/chromium.js'
import {readPng} from '../helpers/png-pixels.js'
import {closeServed, servedDemo} from '../helpers/served-core.js'
import {testTemp} from '../helpers/test-temp.js'

// toma serve in headless Chromium on fixtures/demo: the server started in this process, the token
// URL opened, then a click through overview → classes → a class → an object → a referrer → a step
// of its path → the dominator tree, a node expanded in place and its next page fetched. Each page
// is held against the index, must log no error and break no CSP rule, and its screenshot must be a
// picture (its size, more than a few colours). TOMA_SCREENSHOTS=DIR keeps the object page's
// (docs/serve-object.png was made so).

const chromium = findChromium()
if (!chromium) console.warn('serve browser test skipped: no Chromium found (apt-get install -y chromium, or set TOMA_CHROMIUM)')

const VIEW = {width: 1280, height: 900}

describe.skipIf(!chromium)('toma serve in headless Chromium (fixtures/demo)', () => {
  let ctx: ServeContext
  let server: RunningServer
  let browser: Browser
  let page: Page
  let shots: string
  let retention: RetentionIndex
  const problems: string[] = []

  beforeAll(async () => {
    ctx = await servedDemo()
    retention = new RetentionIndex(ctx.core.index)
    server = await startServer(ctx, SERVE_PAGES, {host: '127.0.0.1', port: 0})
    shots = testTemp('toma-serve-shots-')
    browser = await puppeteer.launch({executablePath: chromium!, headless: true, args: ['--no-sandbox', '--disable-gpu']})
    page = await browser.newPage()
    await page.setViewport(VIEW)
    page.on('console', m => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`)
    })
    page.on('pageerror', e => problems.push(`page error: ${(e as Error).message}`))
    page.on('requestfailed', q => problems.push(`request failed: ${q.url()}`))
    page.on('response', r => {
      if (r.status() >= 400) problems.push(`${r.status()} for ${r.url()}`)
    })
    // A CSP violation is an event in the page as well as a console line: both are counted.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', e => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))
    })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    closeServed(ctx)
    if (shots) fs.rmSync(shots, {recursive: true, force: true})
  })

  const heading = () => page.$eval('header h1', h => h.textContent ?? '')
  const here = () => new URL(page.url()).pathname + new URL(page.url()).search
  async function click(selector: string): Promise<void> {
    await Promise.all([page.waitForNavigation({waitUntil: 'load'}), page.click(selector)])
  }
  /** A screenshot of the page as shown: a PNG of the viewport's size with more than a few colours in its rows. */
  async function screenshot(name: string): Promise<void> {
    const file = path.join(shots, `${name}.png`)
    await page.screenshot({path: file as `${string}.png`})
    const png = readPng(fs.readFileSync(file))
    expect([png.width, png.height]).toEqual([VIEW.width, VIEW.height])
    // Every 10th row: a blank page is one colour, a page of text in the report's styles dozens (anti-aliased glyphs, links, headers).
    const rows = Array.from({length: VIEW.height / 10}, (_, i) => i * 10)
    expect(png.coloursInRows(rows), `${name}: colours`).toBeGreaterThan(16)
    const keep = process.env.TOMA_SCREENSHOTS
    if (keep && name === 'object') fs.copyFileSync(file, path.join(keep, `serve-${name}.png`))
  }

  it('clicks through overview, classes, a class, an object, a referrer, its path and the dominator tree', async () => {
    const index = ctx.core.index
    const program = ctx.core.program()
    // The token URL: a redirect that swaps the token for a cookie, to the overview.
    await page.goto(server.url, {waitUntil: 'load'})
    expect(here()).toBe('/')
    expect(await heading()).toBe('Overview')
    const live = (index.meta.summary as unknown as {states: Array<{state: string; objects: number}>}).states.find(s => s.state === 'live')!.objects
    expect(await page.$eval('main', m => m.textContent ?? '')).toContain(live.toLocaleString('en-US'))
    await screenshot('overview')

    // A class whose first object has a referrer that a root reaches through at least one object.
    const counts = classCounts(index)
    const chosen = counts.types.find(t => {
      const id = index.meta.typeNames.indexOf(t.type) + 1
      const first = index.nameCounts()['type.firstLive'][id]!
      const referrer = first >= 0 && index.inDegree(first) > 0 ? index.inEdges(first, 1)[0]!.from : -1
      return referrer >= 0 && referrer !== first && typeof retention.parent(referrer) === 'number'
    })!
    expect(chosen).toBeDefined()
    const typeId = index.meta.typeNames.indexOf(chosen.type) + 1
    await click('nav a[href="/classes"]')
    expect(await heading()).toBe('Classes')
    await screenshot('classes')
    await click(`#classes a[href="/class?id=${typeId}"]`)
    expect(await heading()).toBe(`Class ${chosen.type}`)
    const listed = await page.$$eval('#class-objects tbody tr', trs => trs.length)
    expect(listed).toBe(Math.min(PAGE_ROWS, chosen.objects))
    await screenshot('class')

    // Its first object (address order).
    const first = index.nameCounts()['type.firstLive'][typeId]!
    await click('#class-objects tbody tr a')
    expect(here()).toBe(`/object?addr=${hex(index.object(first).start)}`)
    expect(await heading()).toBe(`${hex(index.object(first).start)} ${chosen.type}`)
    const firstLine = await page.$eval('pre.hexdump', p => (p.textContent ?? '').split('\n')[0]!)
    const lead = /^→ +\+0x0  /.exec(firstLine)!
    const firstHex = firstLine.slice(lead[0].length, lead[0].length + 48).replace(/ /g, '')
    expect(firstHex).toBe(program.core.memory.readBytes(index.object(first).start, Math.min(16, index.object(first).size))!.toString('hex'))
    const referrers = await page.$$eval('#referrers tbody tr a', as => as.map(a => a.getAttribute('href')))
    expect(referrers).toEqual(index.inEdges(first, PAGE_ROWS).map(e => `/object?addr=${hex(index.object(e.from).start)}`))
    await screenshot('object')

    // A referrer, and the first step of its path from a root.
    const referrer = index.inEdges(first, 1)[0]!.from
    await click('#referrers tbody tr a')
    expect(here()).toBe(`/object?addr=${hex(index.object(referrer).start)}`)
    const want = pathsTo(program, index, retention, index.object(referrer).start, {paths: 1})!.paths[0]!
    const steps = await page.$$eval('#object-path .path a', as => as.map(a => a.getAttribute('href')))
    expect(steps).toEqual(want.steps.map(s => `/object?addr=${s.object.address}`))
    await screenshot('referrer')
    await click('#object-path .path a')
    expect(here()).toBe(`/object?addr=${want.steps[0]!.object.address}`)
    await screenshot('path-start')

    // The dominator tree: its top, a node expanded in place, the next page of the top fetched.
    await click('nav a[href="/dominators"]')
    expect(await heading()).toBe('Dominator tree')
    const top = await page.$$eval('main > ul.domtree > li[data-slot]', lis => lis.map(li => Number(li.getAttribute('data-slot'))))
    expect(top).toEqual(Array.from(retention.top(PAGE_ROWS)))
    const node = top.find(slot => retention.childCount(slot) > 0)!
    await page.click(`li[data-slot="${node}"] > button.dom-expand`)
    await page.waitForSelector(`li[data-slot="${node}"] > ul.domtree > li[data-slot]`, {timeout: 5000})
    const kids = await page.$$eval(`li[data-slot="${node}"] > ul.domtree > li[data-slot]`, lis => lis.map(li => [Number(li.getAttribute('data-slot')), li.textContent]))
    const ranked = childrenBySize(retention, node, PAGE_ROWS).top
    expect(kids.map(k => k[0])).toEqual(ranked.map(c => c.id))
    expect(kids[0]![1]).toContain(`retains ${ranked[0]!.bytes.toLocaleString('en-US')} B in ${ranked[0]!.objects.toLocaleString('en-US')} object${ranked[0]!.objects === 1 ? '' : 's'}`)
    expect(await page.$eval(`li[data-slot="${node}"] > button.dom-expand`, b => b.getAttribute('aria-expanded'))).toBe('true')
    await page.click('main > ul.domtree > li.dom-more-line > button.dom-more')
    await page.waitForFunction(n => document.querySelectorAll("main > ul.domtree > li[data-slot]").length >= n, {timeout: 5000}, 2 * PAGE_ROWS)
    const more = await page.$$eval('main > ul.domtree > li[data-slot]', lis => lis.map(li => Number(li.getAttribute('data-slot'))))
    expect(more).toEqual(Array.from(retention.top(2 * PAGE_ROWS)))
    await screenshot('dominators')
    // The rows the script made from the JSON read as the server's own rows of the same page do.
    const rowTexts = () => page.$$eval('main > ul.domtree > li[data-slot]', lis => lis.map(li => li.textContent))
    const madeHere = (await rowTexts()).slice(PAGE_ROWS, 2 * PAGE_ROWS)
    await page.goto(new URL('/dominators?page=2', page.url()).href, {waitUntil: 'load'})
    expect(await rowTexts()).toEqual(madeHere)
    expect(madeHere[0]).toMatch(/^[+·] 0x[0-9a-f]+ .+ [\d,]+ B retains [\d,]+ B in [\d,]+ objects?/)

    // Everything the pages asked for answered (the layout names an empty icon, so Chromium asks for no
    // /favicon.ico), and nothing logged an error.
    expect(problems).toEqual([])
  }, 30_000)
})
