import fs from 'node:fs'
import path from 'node:path'
import type {Browser, Page} from 'puppeteer-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {findChromium} from '../helpers/chromium.js'
import {copyDiffPair, diffPairFlags as flags, type DiffTruth} from '../helpers/diff-pair.js'
import {fixtureCorePath} from '../helpers/fixture-core.js'
import {columnOf, openReport, visibleRows} from '../helpers/report-page.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// `toma report CORE --baseline OLD` on the diffdemo pair (fixtures/README.md, "The diff pair"):
// the "Compared with" section holds what the process recorded it added and freed between its dumps.
const chromium = findChromium()
if (!chromium) console.warn('baseline-report.test: browser tests skipped: no Chromium found (apt-get install -y chromium, or set TOMA_CHROMIUM)')

describe('toma report --baseline on the pair of diffdemo cores', () => {
  let work: string
  let before: string
  let after: string
  let other: string
  let reportPath: string
  let truth: DiffTruth

  beforeAll(async () => {
    work = testTemp('toma-baseline-report-')
    ;({before, after, truth} = await copyDiffPair(work))
    other = path.join(work, 'other')
    reportPath = path.join(work, 'report.html')
    fs.copyFileSync(await fixtureCorePath('v2.10-shared'), other)
    const r = await runToma(['report', after, '--baseline', before, ...flags, '-o', reportPath, '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({core: after, baseline: before, report: reportPath, bytes: fs.statSync(reportPath).size})
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('adds the section, and each core keeps its own index', () => {
    const text = fs.readFileSync(reportPath, 'utf8')
    expect(text).toContain('<a href="#section-baseline">Compared with before</a>')
    expect(fs.existsSync(before + '.toma-index')).toBe(true)
    expect(fs.existsSync(after + '.toma-index')).toBe(true)
  })

  it('refuses a baseline of another program with one line, before analysing it', async () => {
    // The core named (checked before either is analysed), and the core of an index named (checked once it is open).
    for (const core of [after, after + '.toma-index']) {
      const r = await runToma(['report', core, '--baseline', other, ...flags, '-o', path.join(work, 'refused.html')], {cwd: work})
      expect(r.status, core).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1)
      expect(r.stderr).toMatch(/^toma: .* are cores of different programs .*build-id [0-9a-f]+.*build-id [0-9a-f]+/)
    }
    expect(fs.existsSync(other + '.toma-index')).toBe(false)
    expect(fs.existsSync(path.join(work, 'refused.html'))).toBe(false)
  })

  it('says a missing baseline in one line', async () => {
    const missing = path.join(work, 'no-such-core')
    const r = await runToma(['report', after, '--baseline', missing, ...flags, '-o', path.join(work, 'missing.html')], {cwd: work})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`toma: ${missing}: no such file\n`)
  })

  describe.skipIf(!chromium)('in headless Chromium', () => {
    let browser: Browser
    let page: Page
    let problems: string[]

    /** A table's rows as exact numbers (each numeric cell's data-v), keyed by the first cell, visible rows only. */
    const numbersOf = async (id: string) =>
      new Map(
        await page.$$eval(`#${id} tbody tr`, trs =>
          trs.filter(tr => !(tr as HTMLElement).hidden).map(tr => {
            const cells = Array.from((tr as HTMLTableRowElement).cells)
            return [cells[0]!.textContent ?? '', cells.slice(1).map(c => Number(c.getAttribute('data-v')))] as [string, number[]]
          }),
        ),
      )

    beforeAll(async () => {
      ;({browser, page, problems} = await openReport(chromium!, reportPath))
    })
    afterAll(async () => {
      await browser?.close()
    })

    it('renders without a console error', async () => {
      expect(problems).toEqual([])
      const ids = await page.$$eval('[id]', es => es.map(e => e.id))
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('the type table has exactly the objects the process added and freed', async () => {
      const {born, died} = truth.change
      const rows = await numbersOf('baseline-types')
      // Columns after the type: born, born bytes, died, died bytes, kept, kept bytes, net, net bytes.
      const b = rows.get(born.type)!
      expect(b.slice(0, 4)).toEqual([born.count, born.count * truth.sizes[born.type]!, 0, 0])
      expect(b[4]).toBe(truth.before[born.type])
      expect(b[6]).toBe(born.count)
      const d = rows.get(died.type)!
      expect(d.slice(0, 4)).toEqual([0, 0, died.count, died.count * truth.sizes[died.type]!])
      expect(d[4]).toBe(truth.after[died.type])
      expect(d[6]).toBe(-died.count)
      // Nothing else was born or died.
      for (const [type, n] of rows) if (type !== born.type && type !== died.type) expect(n[0]! + n[2]!, type).toBe(0)
    })

    it('sorts and filters the type table like the others', async () => {
      const diedCol = await columnOf(page, 'baseline-types', 'died')
      await page.click(`#baseline-types thead th[data-col="${diedCol}"]`)
      expect((await visibleRows(page, 'baseline-types'))[0]![0]).toBe(truth.change.died.type)
      await page.type('input.filter[data-table="baseline-types"]', 'entry')
      expect((await visibleRows(page, 'baseline-types')).map(r => r[0])).toEqual([truth.change.born.type])
    })

    it('names the holder that grew, with its field, and TCMalloc\'s bytes per state', async () => {
      const lines = await page.$$eval('#baseline-growth li', ls => ls.map(l => l.textContent ?? ''))
      expect(lines[0]).toContain(`under ${truth.holder.class} at ${truth.holder.address}, via +0x${truth.holder.fieldOffset.toString(16)} → ${truth.holder.entriesBuffer}`)
      const states = await numbersOf('baseline-states')
      // bytes before, bytes after, change: TCMalloc's own counters in each dump.
      const live = states.get('live')!
      const counter = 'generic.current_allocated_bytes'
      expect(live.slice(0, 3)).toEqual([truth.before.phase.counters[counter], truth.after.phase.counters[counter], truth.after.phase.counters[counter]! - truth.before.phase.counters[counter]!])
    })
  })
})
