import fs from 'node:fs'
import path from 'node:path'
import {cacheFolder} from '../util/index-location.js'

/** Lines of history kept between sittings. */
export const HISTORY_LINES = 1000

/** Where the shell keeps its history: the user's cache folder (XDG_CACHE_HOME). */
export function historyFile(): string {
  return path.join(cacheFolder(), 'shell-history')
}

/** The saved history, newest first (readline's order); empty when there is none or it cannot be read. */
export function loadHistory(file = historyFile()): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_LINES).reverse()
  } catch {
    return []
  }
}

/** Appends one line; the file is cut back to the last HISTORY_LINES when it has grown to twice that. */
export function appendHistory(line: string, file = historyFile()): void {
  try {
    fs.appendFileSync(file, `${line.replace(/\n/g, ' ')}\n`)
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
    if (lines.length > 2 * HISTORY_LINES) fs.writeFileSync(file, lines.slice(-HISTORY_LINES).join('\n') + '\n')
  } catch {
    // A read-only cache folder costs only the history of this sitting.
  }
}
