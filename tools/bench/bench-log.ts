// The bench's record: bench/history.jsonl holds one JSON object a run (newest last), and the
// current-figures table of BENCHMARKS.md is rewritten from it, between its two markers, after each
// run. The page's other text (what each figure means, the lead's notes) is written by hand.
import fs from 'node:fs'
import path from 'node:path'

/** The figures every run gives, as the table shows them (null: the run did not measure it). */
export interface BenchFigures {
  coreGiB: number | null
  objects: number | null
  analyzeMs: number | null
  /** `analyze --stage model`: the first answer (absent from runs before issue 33). */
  modelStageMs?: number | null
  peakRssMiB: number | null
  threads: number | null
  indexGiB: number | null
  findObjectMs: number | null
  versionMs: number | null
  /** `toma serve`: the slowest first load of its pages, the time to its printed URL, the pages that failed (absent from runs before issue 55). */
  serveSlowestPageMs?: number | null
  serveUrlMs?: number | null
  serveFailures?: number | null
}

/** One line of bench/history.jsonl. */
export interface BenchEntry {
  date: string
  scale: number | null
  command: string
  /** The commit measured, when known (git's short id; "+dirty" when the tree had changes). */
  commit: string | null
  figures: BenchFigures
  /** The whole result as the harness made it (a run of tools/bench/bench.ts), if any. */
  result?: unknown
  /** The section as it was written (Markdown). */
  text: string
}

export const BEGIN = '<!-- bench:current begin (rewritten by npm run bench from bench/history.jsonl) -->'
export const END = '<!-- bench:current end -->'

export function readHistory(file: string): BenchEntry[] {
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, 'utf8').split('\n').filter(l => l.trim()).map(l => JSON.parse(l) as BenchEntry)
}

/** The newest entry of each scale that measured an analysis, smallest scale first. */
export function currentByScale(history: BenchEntry[]): BenchEntry[] {
  const newest = new Map<number, BenchEntry>()
  for (const e of history) if (e.scale !== null && e.figures.analyzeMs !== null && (newest.get(e.scale)?.date ?? '') <= e.date) newest.set(e.scale, e)
  return [...newest.values()].sort((a, b) => a.scale! - b.scale!)
}

const fixed = (v: number | null, digits: number, unit: string) => (v === null ? '–' : `${v.toFixed(digits)} ${unit}`)

/** The serve step's cell: its slowest page's first load, the time to the printed URL, the pages that failed. */
function servePages(f: BenchFigures): string {
  if (f.serveSlowestPageMs == null) return '–'
  return `${fixed(f.serveSlowestPageMs, 0, 'ms')}; ${fixed(f.serveUrlMs ?? null, 0, 'ms')}${f.serveFailures ? `; ${f.serveFailures} failed` : ''}`
}

/** The current-figures table, Markdown. */
export function currentTable(history: BenchEntry[]): string {
  const rows = currentByScale(history).map(e => {
    const f = e.figures
    const perSlot = f.peakRssMiB !== null && f.objects ? ` (${((f.peakRssMiB * 2 ** 20) / f.objects).toFixed(1)} B/slot)` : ''
    const perGiB = f.analyzeMs !== null && f.coreGiB ? fixed(f.analyzeMs / 1000 / f.coreGiB, 1, 's') : '–'
    return `| ${e.scale} | ${e.date.slice(0, 16).replace('T', ' ')} UTC | ${e.commit ?? 'not named'} | ${fixed(f.coreGiB, 2, 'GiB')} | ${fixed(f.analyzeMs === null ? null : f.analyzeMs / 1000, 1, 's')} | ${perGiB} | ${fixed(f.modelStageMs == null ? null : f.modelStageMs / 1000, 1, 's')} | ${fixed(f.peakRssMiB, 0, 'MiB')}${perSlot} | ${fixed(f.indexGiB, 2, 'GiB')} | ${fixed(f.findObjectMs, 0, 'ms')} | ${servePages(f)} | \`${e.command}\` |`
  })
  return [
    '| scale (M objects) | measured | commit | core | `toma analyze` | per GiB of core | first answer (`--stage model`) | peak RSS | index | `toma find-object` (whole run) | `toma serve`: slowest page (first load); URL printed | command |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

/** Appends `entry` to the history and rewrites the page's table between its markers. */
export function recordRun(root: string, entry: BenchEntry): void {
  const historyFile = path.join(root, 'bench', 'history.jsonl')
  fs.mkdirSync(path.dirname(historyFile), {recursive: true})
  fs.appendFileSync(historyFile, JSON.stringify(entry) + '\n')
  rewritePage(path.join(root, 'BENCHMARKS.md'), readHistory(historyFile))
}

export function rewritePage(page: string, history: BenchEntry[]): void {
  const text = fs.existsSync(page) ? fs.readFileSync(page, 'utf8') : `# Benchmarks\n\n${BEGIN}\n${END}\n`
  const from = text.indexOf(BEGIN)
  const to = text.indexOf(END)
  if (from < 0 || to < from) throw new Error(`${page}: no ${BEGIN} ... ${END} to rewrite`)
  fs.writeFileSync(page, text.slice(0, from + BEGIN.length) + '\n' + currentTable(history) + '\n' + text.slice(to))
}
