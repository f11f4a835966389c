import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {MALLOC_TUNABLES, tunedMallocEnvironment} from '../../src/cli/malloc-tuning.js'
import {analysesTuned} from '../../src/cli/launch.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// `toma analyze` runs itself again with glibc's malloc tuned (huge pages, a fixed mmap threshold):
// the second process must really get the tunables, pass on the signals sent to the first, stop
// when the first is gone, and write the index the first one would have written.
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
const entry = fixtureIndex().find(f => f.config === 'shared' && f.gperftools === '2.10')!

async function analyzeArgs(work: string, name: string): Promise<string[]> {
  const core = await fixtureCorePath(entry.id)
  const f = fixtureFlags(entry)
  return ['analyze', core, '--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : []), '--index', path.join(work, name)]
}

describe('the environment of the second process', () => {
  it("adds the tunables before the user's own ones, and marks the process that runs again", () => {
    expect(tunedMallocEnvironment({PATH: '/bin'}, 'linux', 42)).toEqual({PATH: '/bin', GLIBC_TUNABLES: MALLOC_TUNABLES, TOMA_MALLOC_TUNED_BY: '42'})
    expect(tunedMallocEnvironment({GLIBC_TUNABLES: 'glibc.malloc.arena_max=2'}, 'linux', 42)?.GLIBC_TUNABLES).toBe(`${MALLOC_TUNABLES}:glibc.malloc.arena_max=2`)
  })

  it('is not made for the second process itself, when asked not to, when the user tunes these keys, or off Linux', () => {
    expect(tunedMallocEnvironment({TOMA_MALLOC_TUNED_BY: '42'}, 'linux')).toBeNull()
    expect(tunedMallocEnvironment({TOMA_MALLOC: 'system'}, 'linux')).toBeNull()
    expect(tunedMallocEnvironment({GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0'}, 'linux')).toBeNull()
    expect(tunedMallocEnvironment({GLIBC_TUNABLES: 'glibc.rtld.x=1:glibc.malloc.mmap_threshold=65536'}, 'linux')).toBeNull()
    expect(tunedMallocEnvironment({}, 'darwin')).toBeNull()
  })
})

describe.runIf(process.platform === 'linux')('toma analyze in a second process', () => {
  it('runs with the tunables and writes the index a run with the system malloc writes, byte for byte', async () => {
    const work = testTemp('toma-malloc-')
    const tuned = await runToma([...(await analyzeArgs(work, 'tuned.toma-index')), '--json'], {cwd: work})
    expect(tuned.status, tuned.stderr).toBe(0)
    expect(JSON.parse(tuned.stdout).mallocTunables).toBe(MALLOC_TUNABLES)
    const system = await runToma([...(await analyzeArgs(work, 'system.toma-index')), '--json'], {cwd: work, env: {TOMA_MALLOC: 'system'}})
    expect(system.status, system.stderr).toBe(0)
    expect(JSON.parse(system.stdout).mallocTunables).toBeNull()
    expect(fs.readFileSync(path.join(work, 'tuned.toma-index')).equals(fs.readFileSync(path.join(work, 'system.toma-index')))).toBe(true)
  })

  it('passes a SIGTERM sent to the first process on to the second, and both end by it, leaving no index', async () => {
    const work = testTemp('toma-malloc-signal-')
    const first = spawn(process.execPath, [BIN, ...(await analyzeArgs(work, 'core.toma-index'))], {cwd: work, stdio: 'ignore'})
    const ended = new Promise<NodeJS.Signals | null>(resolve => first.on('exit', (_code, signal) => resolve(signal)))
    // The second process is the first one's child; it is signalled as soon as it exists.
    let second: number | undefined
    for (let i = 0; i < 1000 && second === undefined; i++) {
      second = childrenOf(first.pid!)[0]
      if (second === undefined) await new Promise(r => setTimeout(r, 5))
    }
    expect(second).toBeDefined()
    first.kill('SIGTERM')
    expect(await ended).toBe('SIGTERM')
    for (let i = 0; i < 400 && fs.existsSync(`/proc/${second}`); i++) await new Promise(r => setTimeout(r, 5))
    expect(fs.existsSync(`/proc/${second}`)).toBe(false)
    expect(fs.readdirSync(work)).toEqual([])
  })

  it('the second process abandons the analysis once the first one is gone', async () => {
    const work = testTemp('toma-malloc-orphan-')
    // As if started by a first process that has ended: its parent is not the pid it was given (one
    // above Linux's largest pid, so no process has it).
    const r = await runToma(await analyzeArgs(work, 'core.toma-index'), {cwd: work, env: {TOMA_MALLOC_TUNED_BY: String(2 ** 22 + 1)}})
    expect(r.status).not.toBe(0)
    expect(r.stderr.trim()).toBe('toma: the toma process that started this analysis is gone: analysis abandoned')
    expect(fs.readdirSync(work)).toEqual([])
  })
})

describe.runIf(process.platform === 'linux')('a query given --memory-limit, with no index to answer from', () => {
  it('analyses in the second process, with the tunables, and answers and indexes as a run with the system malloc', async () => {
    const work = testTemp('toma-malloc-query-')
    const core = await fixtureCorePath(entry.id)
    const f = fixtureFlags(entry)
    const args = (name: string) => ['leaks', core, '--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : []), '--index', path.join(work, name), '--memory-limit', '4G']
    const first = spawn(process.execPath, [BIN, ...args('tuned.toma-index')], {cwd: work, env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    first.stdout.setEncoding('utf8').on('data', d => (stdout += d))
    first.stderr.resume()
    const status = new Promise<number | null>(resolve => first.on('close', code => resolve(code)))
    // The second process's environment once it runs toma (forked, before it starts Node, it still has the first one's).
    let environment: string | null = null
    for (let i = 0; i < 1000 && environment === null; i++) {
      const second = childrenOf(first.pid!)[0]
      try {
        const read = second === undefined ? '' : fs.readFileSync(`/proc/${second}/environ`, 'latin1')
        if (read.includes(`TOMA_MALLOC_TUNED_BY=${first.pid}`)) environment = read
      } catch {
        // gone meanwhile
      }
      if (environment === null) await new Promise(r => setTimeout(r, 5))
    }
    // glibc, once it has read the tunables, may cut their string in place at each colon: a NUL
    // there is one, as /proc shows the environment's memory.
    expect(`:${environment?.replaceAll('\0', ':')}`).toContain(`:GLIBC_TUNABLES=${MALLOC_TUNABLES}:`)
    expect(await status).toBe(0)
    const system = await runToma(args('system.toma-index'), {cwd: work, env: {TOMA_MALLOC: 'system'}})
    expect(system.status, system.stderr).toBe(0)
    expect(stdout).toBe(system.stdout)
    expect(stdout).toMatch(/leak/i)
    expect(fs.readFileSync(path.join(work, 'tuned.toma-index')).equals(fs.readFileSync(path.join(work, 'system.toma-index')))).toBe(true)
  })

  it('is what runs again: analyze, and a query given --memory-limit; not another query, nor the shell, nor help', () => {
    expect(analysesTuned(['analyze', 'core.1'])).toBe(true)
    expect(analysesTuned(['leaks', 'core.1', '--memory-limit', '512M'])).toBe(true)
    expect(analysesTuned(['top', 'core.1', '--memory-limit=1G'])).toBe(true)
    expect(analysesTuned(['leaks', 'core.1'])).toBe(false)
    expect(analysesTuned(['find-object', '0x10', '--workers', '2'])).toBe(false)
    expect(analysesTuned(['analyze', 'core.1', '--help'])).toBe(false)
    expect(analysesTuned(['leaks', '--memory-limit', '1G', '-h'])).toBe(false)
    expect(analysesTuned(['leaks', '--', '--memory-limit'])).toBe(false)
    expect(analysesTuned(['shell', 'core.1', '--memory-limit', '1G'])).toBe(false)
  })
})

/** Pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const ppid = /PPid:\s*(\d+)/.exec(fs.readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]
      if (Number(ppid) === pid) out.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return out
}
