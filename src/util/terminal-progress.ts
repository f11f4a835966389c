/**
 * A one-line progress display on stderr for long passes, only when stderr is a terminal (never in
 * pipes, CI or --json runs). Throttled so that it costs nothing measurable.
 */
export function terminalProgress(enabled = process.stderr.isTTY === true, write = (text: string) => void process.stderr.write(text)) {
  let last = 0
  let shown = false
  const update = (phase: string, done: number, total: number) => {
    if (!enabled) return
    const now = Date.now()
    if (now - last < 100) return
    last = now
    const pct = total > 0 ? ` ${Math.min(100, Math.floor((done / total) * 100))}%` : ''
    write(`\r\u001b[K${phase}${pct}`)
    shown = true
  }
  const done = () => {
    if (shown) write('\r\u001b[K')
    shown = false
  }
  return {update, done}
}
