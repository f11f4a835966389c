import fs from 'node:fs'
import {afterAll} from 'vitest'

/**
 * With TOMA_TEST_CPU_LOG=FILE, appends one JSON line a test file to FILE: the file, and the CPU
 * seconds its test process used (user and system) and its waited-for children (the toma CLI runs),
 * from /proc/self/stat. vitest's own report gives each file's wall time, which two forks and a
 * shared machine stretch; this is what the file costs. Each file runs in a process of its own
 * (pool 'forks', isolated), so the process's times are the file's.
 */
const log = process.env.TOMA_TEST_CPU_LOG
if (log) {
  afterAll(suite => {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    // Fields after the command's closing parenthesis: utime is the 14th field, the 12th after it.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    const tick = 100
    const [utime, stime, cutime, cstime] = [f[11]!, f[12]!, f[13]!, f[14]!].map(t => t / tick)
    const file = 'filepath' in suite ? String(suite.filepath) : suite.name
    fs.appendFileSync(log, JSON.stringify({file, pid: process.pid, utime, stime, cutime, cstime, cpu: utime + stime + cutime + cstime}) + '\n')
  })
}
