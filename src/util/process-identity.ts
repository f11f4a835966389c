import fs from 'node:fs'

/**
 * A process as another one can recognise it later: its pid and its start time (clock ticks after
 * boot, /proc/PID/stat's 22nd field), so a pid the kernel has given to a new process since is not
 * taken for the old one.
 */
export interface ProcessIdentity {
  pid: number
  startTime: number
}

/** A pid's start time; null when the process is gone or has exited (or there is no /proc). */
function startTimeOf(pid: number): number | null {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return null
  }
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // A zombie has finished: its parent has not collected it yet.
  if (fields[0] === 'Z' || fields[0] === 'X') return null
  const start = Number(fields[19])
  return Number.isSafeInteger(start) ? start : null
}

/** This process, or null where its start time cannot be read. */
export function thisProcess(): ProcessIdentity | null {
  const startTime = startTimeOf(process.pid)
  return startTime === null ? null : {pid: process.pid, startTime}
}

/** Whether the process is still running (the same one: same pid and start time). */
export function isRunning(p: ProcessIdentity): boolean {
  return Number.isSafeInteger(p.pid) && p.pid > 0 && startTimeOf(p.pid) === p.startTime
}
