import fs from 'node:fs'
import path from 'node:path'

/** The names Chromium's executable has on Debian (the `chromium` package) and elsewhere. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']

/**
 * The Chromium to drive headless: TOMA_CHROMIUM when set, else the first of the usual names on
 * PATH; null when there is none (the browser tests are then skipped and say why).
 */
export function findChromium(): string | null {
  const given = process.env.TOMA_CHROMIUM
  if (given) return fs.existsSync(given) ? given : null
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of NAMES) {
      const file = path.join(dir, name)
      try {
        fs.accessSync(file, fs.constants.X_OK)
        return file
      } catch {
        // not here
      }
    }
  }
  return null
}
