/**
 * A one-line progress display on stderr for long passes, only when stderr is a terminal (never in
 * pipes, CI or --json runs). Throttled so that it costs nothing measurable. Once a phase has run
 * for a moment it shows its rate (the phase's own units per second: spans, objects, pages) and
 * an estimate of the time it has left, from its rate so far.
 */
export function terminalProgress(
  enabled = process.stderr.isTTY === true,
  write: (text: string) => void = text => void process.stderr.write(text),
  now: () => number = Date.now,
) {
  let last = -Infinity
  let shown = false
  let phase = ''
  let phaseStart = 0
  const update = (name: string, done: number, total: number) => {
    if (!enabled) return
    const t = now()
    if (name !== phase) {
      phase = name
      phaseStart = t
    }
    if (t - last < 100) return
    last = t
    write(`\r\u001b[K${progressLine(name, done, total, (t - phaseStart) / 1000)}`)
    shown = true
  }
  const done = () => {
    if (shown) write('\r\u001b[K')
    shown = false
  }
  return {update, done}
}

/** Seconds a phase runs before its rate and estimate are shown (the first moments say little). */
const SETTLE_SECONDS = 1

/** "scan objects 40% · 1.2 M/s · ~3 s left" (the rate and estimate once the phase has settled). */
export function progressLine(phase: string, done: number, total: number, seconds: number): string {
  if (!(total > 0)) return phase
  const fraction = Math.min(1, Math.max(0, done / total))
  let line = `${phase} ${Math.floor(fraction * 100)}%`
  if (seconds >= SETTLE_SECONDS && done > 0) {
    const rate = done / seconds
    line += ` · ${compact(rate)}/s · ~${duration((total - done) / rate)} left`
  }
  return line
}

function compact(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} G`
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`
  return n.toFixed(n >= 10 ? 0 : 1)
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds))
  return s < 90 ? `${s} s` : `${Math.round(s / 60)} min`
}
