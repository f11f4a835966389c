import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {MALLOC_TUNABLES, tunedMallocEnvironment} from '../../src/cli/malloc-tuning.js'
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
