import {spawn, spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {progressLine, terminalProgress} from '../../src/util/terminal-progress.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
// util-linux's script(1) gives the command a terminal, where the progress display belongs.
const haveScript = spawnSync('sh', ['-c', 'command -v script']).status === 0
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** Runs toma on a pseudo-terminal; what it wrote to the terminal (stdout and stderr together). */
function runOnTerminal(args: string[], cwd: string): Promise<{status: number | null; output: string}> {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ')
  return new Promise(resolve => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {cwd, env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
    let output = ''
    child.stdout.setEncoding('utf8').on('data', d => (output += d))
    child.stderr.setEncoding('utf8').on('data', d => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('close', status => {
      clearTimeout(timer)
      resolve({status, output})
    })
  })
}

const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
/** A progress redraw: carriage return, clear line, then the run's elapsed time. */
const REDRAW = /\r\u001b\[K\[\d+\.\d s\] [a-z]/

describe.skipIf(!haveScript)('analyze on a terminal', () => {
  it('shows each phase with the elapsed time, and --quiet or --json shows none', async () => {
    const work = testTemp('toma-progress-')
    const core = await fixtureCorePath(entry.id)
    const f = fixtureFlags(entry)
    const flags = ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
    const shown = await runOnTerminal(['analyze', core, ...flags, '--index', path.join(work, 'a.toma-index')], work)
    expect(shown.status, shown.output).toBe(0)
    expect(shown.output).toMatch(REDRAW)
    for (const extra of ['--quiet', '--json']) {
      const silent = await runOnTerminal(['analyze', core, ...flags, '--index', path.join(work, `b${extra}.toma-index`), extra], work)
      expect(silent.status, silent.output).toBe(0)
      expect(silent.output).not.toMatch(REDRAW)
    }
  })
})

describe('progressLine', () => {
  it('gives bytes a rate and every counted phase an estimate, once a second of it has passed', () => {
    // 300 MiB of 1 GiB in 2 s: 150 MiB/s, 724 MiB left ≈ 4.8 s.
    expect(progressLine('scan objects', 300 * 2 ** 20, 2 ** 30, 'bytes', 12_345, 2000, 300 * 2 ** 20)).toBe('[12.3 s] scan objects 29% · 150 MiB/s · ~4.8 s left')
    expect(progressLine('types', 1, 4, undefined, 61_000, 3000, 1)).toBe('[1 min 01 s] types 25% · ~9.0 s left')
    // Too early for a rate; a phase of unknown length has neither share nor estimate.
    expect(progressLine('scan objects', 10, 100, 'bytes', 500, 500, 10)).toBe('[0.5 s] scan objects 10%')
    expect(progressLine('roots', 0, 0, undefined, 5000, 4000, 0)).toBe('[5.0 s] roots')
  })

  it('measures a phase from its own start, and clears its line when done', () => {
    let t = 0
    const written: string[] = []
    const bar = terminalProgress(true, s => void written.push(s), () => t)
    bar.update('page map', 0, 1)
    t = 5000
    bar.update('scan objects', 0, 2 ** 30, 'bytes')
    t = 5050 // too soon to redraw
    bar.update('scan objects', 2 ** 20, 2 ** 30, 'bytes')
    t = 7000
    bar.update('scan objects', 2 ** 29, 2 ** 30, 'bytes')
    bar.done()
    expect(written).toEqual([
      '\r\u001b[K[0.0 s] page map 0%',
      '\r\u001b[K[5.0 s] scan objects 0%',
      '\r\u001b[K[7.0 s] scan objects 50% · 256 MiB/s · ~2.0 s left',
      '\r\u001b[K',
    ])
  })
})
