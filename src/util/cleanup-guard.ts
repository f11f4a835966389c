import type {ChildProcess} from 'node:child_process'
import {createRequire} from 'node:module'

/**
 * Removes this process's temporary files when it dies before it could: Ctrl-C, SIGTERM, SIGHUP,
 * SIGKILL or a crash. A signal handler in this process cannot do it: the analysis runs for
 * seconds at a time without returning to the event loop (and waits in Atomics.wait while a worker
 * decompresses), so a handler would run only after the work, if ever, and Ctrl-C would not stop
 * it. Instead a small watcher process is started with the first temporary file: it learns each
 * file's name over a pipe and, when the pipe closes (this process ended, however), removes those
 * still listed. It runs in its own process group, so the terminal's Ctrl-C does not stop it with us.
 *
 * Messages are one per line: `+` or `-` followed by the path as JSON (any byte a path may hold).
 */
const WATCHER = `
const fs = require('fs')
const files = new Set()
let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', d => {
  pending += d
  for (let nl; (nl = pending.indexOf('\\n')) >= 0; ) {
    const line = pending.slice(0, nl)
    pending = pending.slice(nl + 1)
    try {
      const file = JSON.parse(line.slice(1))
      if (line[0] === '+') files.add(file)
      else files.delete(file)
    } catch {}
  }
})
process.stdin.on('end', () => {
  for (const file of files) try { fs.unlinkSync(file) } catch {}
})
`

let watcher: ChildProcess | null = null
/** The watcher could not start (a process limit): temporaries are then left to the stale sweep. */
let unavailable = false
const watched = new Set<string>()

function send(line: string): void {
  if (!watcher?.stdin || watcher.stdin.destroyed) return
  // libuv writes at once to an idle pipe, before any long synchronous work that follows.
  watcher.stdin.write(line + '\n')
}

function startWatcher(): void {
  if (watcher || unavailable) return
  try {
    const {spawn}: typeof import('node:child_process') = createRequire(import.meta.url)('node:child_process')
    watcher = spawn(process.execPath, ['-e', WATCHER], {detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: {PATH: process.env.PATH ?? ''}})
    watcher.on('error', () => {
      unavailable = true
      watcher = null
    })
    watcher.stdin!.on('error', () => {})
    // Neither the watcher nor its pipe keeps this process running.
    watcher.unref()
    ;(watcher.stdin as unknown as {unref?: () => void}).unref?.()
  } catch {
    unavailable = true
    watcher = null
  }
}

/** Call before creating `file`: from then on it is removed if this process dies before `release`. */
export function guardFile(file: string): void {
  startWatcher()
  watched.add(file)
  send('+' + JSON.stringify(file))
}

/** `file` was renamed into place or removed: the watcher forgets it. */
export function releaseFile(file: string): void {
  if (!watched.delete(file)) return
  send('-' + JSON.stringify(file))
}

/** The files guarded now (tests). */
export function guardedFiles(): string[] {
  return [...watched]
}
