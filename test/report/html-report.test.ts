import fs from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import type {Browser, Page} from 'puppeteer-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {findChromium} from '../helpers/chromium.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {columnOf as column, openReport, visibleRows} from '../helpers/report-page.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp, testTempFile} from '../helpers/test-temp.js'

// `toma report` on a real fixture core, opened in headless Chromium (one launch for the file):
// it must render without errors or requests, and its tables must hold what the process recorded.
const ID = 'v2.10-shared'
const entry = fixtureIndex().find(f => f.id === ID)
const chromium = findChromium()
if (!chromium) console.warn('html-report.test: browser tests skipped: no Chromium found (apt-get install -y chromium, or set TOMA_CHROMIUM)')
if (!entry) console.warn(`html-report.test: skipped: no fixture ${ID}`)

describe.skipIf(!entry)(`toma report on ${ID}`, () => {
  let work: string
  let reportPath: string
  let truth: Truth

  beforeAll(async () => {
    work = testTemp('toma-html-report-')
    reportPath = path.join(work, 'report.html')
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, ID, 'truth.json'), 'utf8'))
    const f = fixtureFlags(entry!)
    const core = await fixtureCorePath(ID)
    const r = await runToma(['report', core, '--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : []), '--index', path.join(work, 'core.toma-index'), '-o', reportPath, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({core, report: reportPath, bytes: fs.statSync(reportPath).size})
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('writes one file that loads nothing, with the names from the core escaped', () => {
    const text = fs.readFileSync(reportPath, 'utf8')
    expect(text).not.toMatch(/<(link|img|iframe|object|embed)\b|\bsrc=|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/i)
    expect(text).toContain("default-src 'none'")
    expect(text).toContain('app::Box&lt;int&gt;')
    expect(text).not.toContain('app::Box<int>')
    // The memory section names what pins spans: app::Box<int> among them, escaped there too.
    const at = text.indexOf('<section id="section-memory"')
    expect(at).toBeGreaterThan(0)
    expect(text.slice(at, text.indexOf('</section>', at))).toContain('app::Box&lt;int&gt;')
  })

  it('refuses an output it cannot write with one line', async () => {
    const r = await runToma(['report', path.join(work, 'core.toma-index'), '-o', path.join(work, 'no-such-folder', 'r.html')], {cwd: work})
    expect(r.status).toBe(74)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^toma: .*no-such-folder.*cannot write: no such folder \(ENOENT\)$/m)
  })

  describe.skipIf(!chromium)('in headless Chromium', () => {
    let browser: Browser
    let page: Page
    let problems: string[]
    let requests: string[]

    const rowsOf = (id: string) => visibleRows(page, id)
    /** A column's exact numbers (each numeric cell's data-v), visible rows only. */
    const numbersOf = (id: string, col: number) =>
      page.$$eval(`#${id} tbody tr`, (trs, c) => trs.filter(tr => !(tr as HTMLElement).hidden).map(tr => Number((tr as HTMLTableRowElement).cells[c]!.getAttribute('data-v'))), col)
    const columnOf = (id: string, title: string) => column(page, id, title)

    beforeAll(async () => {
      ;({browser, page, problems, requests} = await openReport(chromium!, reportPath))
    })
    afterAll(async () => {
      await browser?.close()
    })

    it('renders from the one file: no console error, page error or other request', () => {
      expect(problems).toEqual([])
      expect(requests).toEqual([pathToFileURL(reportPath).href])
    })

    it('gives every element its own id, and every link of the navigation a target', async () => {
      const ids = await page.$$eval('[id]', es => es.map(e => e.id))
      expect(ids.length).toBeGreaterThan(10)
      expect(new Set(ids).size).toBe(ids.length)
      for (const href of await page.$$eval('nav a', as => as.map(a => a.getAttribute('href')!))) expect(ids, href).toContain(href.slice(1))
    })

    it('cuts a long list and says how many more there are and where they all are', async () => {
      const top = await rowsOf('dominator-top')
      expect(top.length).toBe(25)
      const more = await page.$eval('#dominator-top + p.more', p => p.textContent)
      expect(more).toMatch(/^… [\d,]+ more not shown \(the whole list: toma top --json/)
    })

    it('bytes per state (table and bar) are the process\'s own counters', async () => {
      const states = Object.fromEntries((await rowsOf('states')).map((r, i) => [r[0], i]))
      const bytesCol = await numbersOf('states', 2)
      const expected: Record<string, string> = {live: 'generic.current_allocated_bytes', 'thread-cache': 'tcmalloc.thread_cache_free_bytes', 'page-heap': 'tcmalloc.pageheap_free_bytes', returned: 'tcmalloc.pageheap_unmapped_bytes'}
      for (const [state, counter] of Object.entries(expected)) expect(bytesCol[states[state]!], state).toBe(truth.counters[counter])
      // The bar: one segment per state with bytes, widths in proportion to the bytes.
      const bar = await page.$$eval('#states-bar rect.state', rs => rs.map(r => ({state: r.getAttribute('data-state'), bytes: Number(r.getAttribute('data-bytes')), width: Number(r.getAttribute('width'))})))
      expect(bar.map(b => b.state).sort()).toEqual(Object.keys(states).filter(s => bytesCol[states[s]!]! > 0).sort())
      const totalBytes = bar.reduce((n, b) => n + b.bytes, 0)
      const totalWidth = bar.reduce((n, b) => n + b.width, 0)
      for (const b of bar) expect(b.width / totalWidth, b.state!).toBeCloseTo(b.bytes / totalBytes, 6)
      expect(bar.find(b => b.state === 'live')!.bytes).toBe(truth.counters['generic.current_allocated_bytes'])
    })

    it('the classes table holds the fixture\'s types, app::Session from the g_registry accumulation first', async () => {
      const rows = await rowsOf('classes')
      const objects = await numbersOf('classes', 1)
      const live = await numbersOf('classes', 2)
      const acc = truth.accumulation
      expect(rows[0]![0]).toBe(acc.type)
      expect(objects[0]).toBe(acc.count)
      expect(live[0]).toBe(acc.count * acc.bytesEach)
      // Every class of the manifest is a row, with at least as many objects as the manifest names.
      for (const cls of new Set(truth.objects.map(o => o.class).filter(c => c !== null))) {
        const i = rows.findIndex(r => r[0] === cls)
        expect(i, cls!).toBeGreaterThanOrEqual(0)
        expect(objects[i], cls!).toBeGreaterThanOrEqual(truth.objects.filter(o => o.class === cls).length)
      }
      // The holder retains what it accumulated.
      const retained = await numbersOf('classes', 3)
      expect(retained[rows.findIndex(r => r[0] === acc.holderClass)]).toBeGreaterThanOrEqual(acc.count * acc.bytesEach)
      // A name with '<' from the core is text, not markup.
      expect(rows.some(r => r[0] === 'app::Box<int>')).toBe(true)
      expect(await page.$('int')).toBeNull()
    })

    it('sorts the classes table by a clicked column', async () => {
      const objectsCol = await columnOf('classes', 'objects')
      const header = `#classes thead th[data-col="${objectsCol}"]`
      await page.click(header)
      const down = await numbersOf('classes', objectsCol)
      expect(down).toEqual([...down].sort((a, b) => b - a))
      expect(await page.$eval(header, th => th.getAttribute('aria-sort'))).toBe('descending')
      await page.click(header)
      const up = await numbersOf('classes', objectsCol)
      expect(up).toEqual([...down].sort((a, b) => a - b))
      expect(up[up.length - 1]).toBe(down[0])
      expect(up).toContain(truth.accumulation.count)
      await page.click('#classes thead th[data-col="0"]')
      const names = (await rowsOf('classes')).map(r => r[0]!)
      expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0)))
    })

    it('filters the classes table by typed text', async () => {
      const all = (await rowsOf('classes')).length
      const box = 'input.filter[data-table="classes"]'
      await page.type(box, 'registry')
      expect((await rowsOf('classes')).map(r => r[0])).toEqual([truth.accumulation.holderClass])
      expect(await page.$eval('.shown[data-table="classes"]', e => e.textContent)).toBe('1 row')
      await page.click(box, {count: 3})
      await page.keyboard.press('Backspace')
      expect((await rowsOf('classes')).length).toBe(all)
    })

    it('draws the treemap, with the registry\'s box, and lists every deliberate leak', async () => {
      const boxes = await page.$$eval('#treemap rect.box', rs => rs.map(r => ({title: r.querySelector('title')?.textContent ?? '', area: Number(r.getAttribute('width')) * Number(r.getAttribute('height'))})))
      expect(boxes.length).toBeGreaterThan(10)
      const holder = boxes.find(b => b.title.startsWith(`${truth.accumulation.holderClass} ${truth.accumulation.holder}:`))
      expect(holder, 'a box for the registry').toBeDefined()
      expect(holder!.area).toBeGreaterThan(0)
      const leaked = new Set([...(await rowsOf('leak-starts')), ...(await rowsOf('leaks-largest'))].map(r => r[0]))
      for (const o of truth.objects.filter(x => x.leaked)) expect(leaked.has(o.address), o.name).toBe(true)
    })

    it('names the registry a suspect, its sessions accumulated under it', async () => {
      const acc = truth.accumulation
      const headings = await page.$$eval('#section-suspects h3', hs => hs.map(h => h.textContent ?? ''))
      const n = headings.findIndex(h => h.includes(`${acc.holderClass} at ${acc.holder}`))
      expect(n, headings.join('\n')).toBeGreaterThanOrEqual(0)
      const rows = await rowsOf(`suspect-${n + 1}-accumulated`)
      expect(rows[0]!.slice(0, 2)).toEqual([acc.type, acc.count.toLocaleString('en-US')])
      const path = await page.$$eval('#section-suspects .path', ps => ps.map(p => p.textContent ?? ''))
      expect(path.some(p => p.includes(acc.symbol) && p.includes(acc.holder))).toBe(true)
    })

    it('lists every thread with its start routine and stack', async () => {
      const rows = await rowsOf('threads')
      expect(rows.map(r => Number(r[0])).sort()).toEqual(truth.threads.map(t => t.tid).sort())
      for (const t of truth.threads.filter(x => x.startRoutine)) expect(rows.find(r => Number(r[0]) === t.tid)![1], String(t.tid)).toContain(t.startRoutine)
      const stacks = await page.$$eval('#section-threads details', ds => ds.map(d => d.textContent ?? ''))
      expect(stacks).toHaveLength(truth.threads.length)
      // Every frame gdb named in a worker's stack is in the report's.
      for (const g of truth.gdbStacks) {
        const text = stacks.find(x => x.includes(`thread ${g.tid} `))!
        for (const f of g.frames.filter(x => x.function && x.type === 'normal' && x.function.startsWith('app::'))) expect(text, `${g.tid} ${f.function}`).toContain(f.function!)
      }
    })

    it('saves a screenshot', async () => {
      const shot = testTempFile(`html-report-${ID}.png`)
      await page.screenshot({path: shot, fullPage: true})
      const png = fs.readFileSync(shot)
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG')
      expect(png.length).toBeGreaterThan(50_000)
      console.log(`html-report.test: screenshot in ${shot} (${png.length} bytes)`)
    })
  })
})
