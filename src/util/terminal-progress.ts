/**
 * A one-line progress display on stderr for long passes, only when stderr is a terminal (never in
 * pipes, CI or --json runs) and not silenced by `--quiet`. Throttled so that it costs nothing
 * measurable. Each phase shows how far it is, how fast it goes once that can be said (bytes a
 * second for phases counted in bytes) and an estimate of the time left; the whole run's elapsed
 * time leads the line, so a user sees both where a long analysis is and how long it has taken.
 */

/** What a phase counts, when it says: bytes get a rate in MiB/s; other counts only an estimate. */
export type ProgressUnit = 'bytes'

export type ProgressUpdate = (phase: string, done: number, total: number, unit?: ProgressUnit) => void

let silenced = false

/** `--quiet`: no progress display for the rest of this process (workers ask through progressWanted). */
export function silenceProgress(): void {
  silenced = true
}

/** Whether a progress display belongs on this process's stderr. */
export function progressWanted(): boolean {
  return !silenced && process.stderr.isTTY === true
}

/** A phase is estimated only after this long: its first moments say little about its rate. */
const ESTIMATE_AFTER_MS = 1000
const REDRAW_MS = 100

export function terminalProgress(enabled = progressWanted(), write = (text: string) => void process.stderr.write(text), now = () => Date.now()) {
  const started = now()
  let last = -Infinity
  let shown = false
  let phase = ''
  let phaseStarted = started
  let phaseFirstDone = 0
  const update: ProgressUpdate = (name, done, total, unit) => {
    if (!enabled) return
    const t = now()
    if (name !== phase) {
      phase = name
      phaseStarted = t
      phaseFirstDone = done
    }
    if (t - last < REDRAW_MS) return
    last = t
    write(`\r\u001b[K${progressLine(name, done, total, unit, t - started, t - phaseStarted, done - phaseFirstDone)}`)
    shown = true
  }
  const done = () => {
    if (shown) write('\r\u001b[K')
    shown = false
  }
  return {update, done}
}

/**
 * `[12.3 s] scan objects 42% · 310 MiB/s · ~9 s left`: the run's elapsed time, the phase, its share
 * done, its rate (bytes only) and the time left at the rate of this phase so far.
 */
export function progressLine(phase: string, done: number, total: number, unit: ProgressUnit | undefined, runMs: number, phaseMs: number, phaseDone: number): string {
  const parts = [`[${seconds(runMs)}] ${phase}`]
  const known = total > 0 && done >= 0
  if (known) parts[0] += ` ${Math.min(100, Math.floor((done / total) * 100))}%`
  if (phaseMs >= ESTIMATE_AFTER_MS && phaseDone > 0) {
    const perMs = phaseDone / phaseMs
    if (unit === 'bytes') parts.push(`${(perMs * 1000 / 2 ** 20).toFixed(perMs * 1000 < 10 * 2 ** 20 ? 1 : 0)} MiB/s`)
    if (known && done < total) parts.push(`~${seconds((total - done) / perMs)} left`)
  }
  return parts.join(' · ')
}

function seconds(ms: number): string {
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(1)} s`
  const m = Math.floor(s / 60)
  return `${m} min ${String(Math.floor(s - m * 60)).padStart(2, '0')} s`
}
