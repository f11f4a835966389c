import fs from 'node:fs'

/**
 * Starts the process's peak resident memory afresh from what it holds now, before an analysis:
 * Linux's clear_refs 5 resets the high-water mark that getrusage's maxRSS reads, so that the peak
 * an analysis reports in the shell is its own, not an earlier command's. False where Linux does
 * not let it (the peak is then the process's lifetime one).
 */
export function resetPeakMemory(): boolean {
  let fd: number
  try {
    // Opened to write only, never created nor truncated: the file is the kernel's or nothing.
    fd = fs.openSync('/proc/self/clear_refs', fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW)
  } catch {
    return false
  }
  try {
    fs.writeSync(fd, '5')
    return true
  } catch {
    return false
  } finally {
    fs.closeSync(fd)
  }
}
