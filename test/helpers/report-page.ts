import {pathToFileURL} from 'node:url'
import puppeteer, {type Browser, type Page} from 'puppeteer-core'

/** A report opened in headless Chromium, with every console error or warning, page error and request it made. */
export interface OpenedReport {
  browser: Browser
  page: Page
  problems: string[]
  requests: string[]
}

/** Opens a report file in headless Chromium (the caller closes the browser). */
export async function openReport(chromium: string, file: string): Promise<OpenedReport> {
  const browser = await puppeteer.launch({executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu']})
  const page = await browser.newPage()
  const problems: string[] = []
  const requests: string[] = []
  page.on('console', m => {
    if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`)
  })
  page.on('pageerror', e => problems.push(`page error: ${(e as Error).message}`))
  page.on('requestfailed', q => problems.push(`request failed: ${q.url()}`))
  page.on('request', q => requests.push(q.url()))
  await page.setViewport({width: 1400, height: 1000})
  await page.goto(pathToFileURL(file).href, {waitUntil: 'load'})
  return {browser, page, problems, requests}
}

/** A table's body rows as cell texts, visible rows only (the filter hides rows). */
export function visibleRows(page: Page, id: string): Promise<string[][]> {
  return page.$$eval(`#${id} tbody tr`, trs => trs.filter(tr => !(tr as HTMLElement).hidden).map(tr => Array.from((tr as HTMLTableRowElement).cells, c => c.textContent ?? '')))
}

/** The index of a table's column by its header text (-1: none). */
export async function columnOf(page: Page, id: string, title: string): Promise<number> {
  return (await page.$$eval(`#${id} thead th`, ths => ths.map(th => th.textContent))).indexOf(title)
}
