import fs from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {processExists} from '../../src/util/temporary-file.js'

const {O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY} = fs.constants

/** The pid written in a lock file, or null when it cannot be read yet (its maker is between open and write). */
function lockOwner(lock: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

/**
 * Makes the file `out` once, however many test processes of the run ask for it at the same time
 * (vitest runs one fork a CPU): the first to create `out.lock` (O_EXCL) calls `build` with a
 * temporary path of its own, renames what it wrote into place and removes the lock; the others wait
 * for `out` instead of making it again. Unpacking one google/tcmalloc core (3.4 GB, mostly zeros) is
 * 5 s of CPU, and one analysis of a fixture core 2 to 5 s: two forks both making one doubled it.
 * A lock whose maker has ended without finishing is removed and the file is made again; an error
 * in `build` is the caller's, and the next caller tries again.
 */
export async function buildOnce(out: string, build: (tmp: string) => Promise<void> | void): Promise<string> {
  const lock = `${out}.lock`
  for (;;) {
    if (fs.existsSync(out)) return out
    let fd: number
    try {
      fd = fs.openSync(lock, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, 0o600)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const owner = lockOwner(lock)
      if (owner !== null && !processExists(owner)) fs.rmSync(lock, {force: true})
      else await sleep(50)
      continue
    }
    const tmp = `${out}.tmp-${process.pid}`
    try {
      fs.writeSync(fd, String(process.pid))
      fs.closeSync(fd)
      // Made between our look and our lock by a process that has since let go of it.
      if (fs.existsSync(out)) return out
      await build(tmp)
      fs.renameSync(tmp, out)
      return out
    } finally {
      fs.rmSync(tmp, {recursive: true, force: true})
      fs.rmSync(lock, {force: true})
    }
  }
}
