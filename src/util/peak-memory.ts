import fs from 'node:fs'

/**
 * Starts the process's peak resident memory afresh from what it holds now, before an analysis:
 * Linux's clear_refs 5 resets the high-water mark that getrusage's maxRSS reads, so that the peak
 * an analysis reports in the shell is its own, not an earlier command's. False where Linux does
 * not let it (the peak is then the process's lifetime one).
 */
export function resetPeakMemory(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5')
    return true
  } catch {
    return false
  }
}
