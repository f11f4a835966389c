import {spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {fastBundle} from '../../src/cli/launch.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

const ROOT = new URL('../..', import.meta.url)
const BIN = fileURLToPath(new URL('bin/run.js', ROOT))

/**
 * Runs toma and says whether oclif's configuration code was loaded (CommonJS modules required by
 * others show in require's cache).
 */
function runProbed(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{status: number | null; oclif: boolean}> {
  // The marker must be there: a probe that did not run would read as "no oclif".
  const probe = `import {createRequire} from 'node:module'; const cache = createRequire(process.argv[1]).cache; process.on('exit', () => process.stderr.write('\\noclif-loaded:' + Object.keys(cache).some(k => k.includes('/@oclif/core/lib/config/'))))`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(probe)}`, BIN, ...args], {cwd, env: {...process.env, NO_COLOR: '1', ...env}})
    let stderr = ''
    child.stdout.resume()
    child.stderr.setEncoding('utf8').on('data', d => (stderr += d))
    child.on('close', status => {
      const marker = /oclif-loaded:(true|false)/.exec(stderr)
      if (!marker) reject(new Error(`no probe marker: ${stderr}`))
      else resolve({status, oclif: marker[1] === 'true'})
    })
  })
}

// bin/run.js runs a command without oclif when it can (src/cli/fast-command.ts); whatever it
// does must be what oclif does. Each command line runs both ways (TOMA_OCLIF=1: oclif always)
// and must give the same exit code, output and errors, on one fixture core.
describe('the fast path answers as oclif does', () => {
  const entry = fixtureIndex().find(f => f.id === 'v2.10-minimal')!
  let work: string
  let truth: Truth

  beforeAll(async () => {
    work = testTemp('toma-fast-')
    fs.copyFileSync(await fixtureCorePath(entry.id), path.join(work, 'core'))
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8'))
    const r = await runToma(['analyze', 'core', '--exe', fixtureFlags(entry).exe], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  const address = () => truth.objects[0]!.address
  const lines: Array<[string, () => string[]]> = [
    ['a query', () => ['find-object', address(), 'core']],
    ['flags with values, both spellings', () => ['find-object', address(), 'core', '--strings', '--bytes=48']],
    ['a flag before the arguments', () => ['find-object', '--bytes', '32', address(), 'core']],
    ['the latest analysis, no core given', () => ['refs', address(), '--in', '--limit', '3']],
    ['a report of several parts', () => ['classes', 'core']],
    ['an option flag', () => ['top', 'core', '--by', 'type', '--limit', '5']],
    ['a value the options refuse', () => ['top', 'core', '--by', 'size']],
    ['an integer out of range', () => ['find-object', address(), 'core', '--bytes', '3']],
    ['not an integer', () => ['dominators', address(), 'core', '--depth', 'two']],
    ['a missing argument', () => ['find-object']],
    ['an extra argument', () => ['leaks', 'core', 'more']],
    ['an unknown flag', () => ['threads', 'core', '--bogus']],
    ['a flag without its value', () => ['classes', 'core', '--index']],
    ['a flag given twice', () => ['leaks', 'core', '--limit', '1', '--limit', '2']],
    ['exclusive flags', () => ['refs', address(), 'core', '--in', '--out']],
    ['a bad address', () => ['path', 'nowhere', 'core']],
    ['a missing core', () => ['info', 'no-such-core']],
    ['a short flag', () => ['export', 'core', '--format', 'dot', '-o', 'graph.dot', '--max-nodes', '5']],
    ['the version', () => ['--version']],
  ]

  it.each(lines)('%s', async (_, argv) => {
    const fast = await runToma(argv(), {cwd: work})
    const oclif = await runToma(argv(), {cwd: work, env: {TOMA_OCLIF: '1'}})
    expect(fast).toEqual(oclif)
  })

  it('a plain query and --version load no oclif; help, --json and the shell do', async () => {
    expect((await runProbed(['find-object', address(), 'core'], work)).oclif).toBe(false)
    expect((await runProbed(['top', 'core', '--by', 'type'], work)).oclif).toBe(false)
    expect((await runProbed(['--version'], work)).oclif).toBe(false)
    expect((await runProbed(['find-object', address(), 'core'], work, {TOMA_OCLIF: '1'})).oclif).toBe(true)
    expect((await runProbed(['find-object', '--help'], work)).oclif).toBe(true)
    expect((await runProbed(['find-object', address(), 'core', '--json'], work)).oclif).toBe(true)
  })
})

// npm test bundles each command's fast path (tools/build/bundle-fast-path.ts); bin/run.js runs a
// bundle whenever it is there and newer than the compiled command, so the comparisons above run
// the bundles. They must all be there: else those comparisons ran the compiled modules only.
describe('the bundled fast path', () => {
  it('has a current bundle for every command of the manifest', () => {
    const manifest = JSON.parse(fs.readFileSync(new URL('oclif.manifest.json', ROOT), 'utf8')) as {commands: Record<string, {relativePath: string[]}>}
    const ids = Object.keys(manifest.commands)
    expect(ids).toContain('find-object')
    const missing = ids.filter(id => !fastBundle(ROOT, id, manifest.commands[id]!.relativePath.join('/')))
    expect(missing).toEqual([])
  })

  // A bundle is one file elsewhere than the modules it holds: the worker scripts, found next to
  // their modules' compiled files, must still be found, or the scan would quietly run on one thread.
  it('analyses a core first with its worker threads, as oclif does', async () => {
    const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
    const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8')) as Truth
    const f = fixtureFlags(entry)
    // refs needs the graph: the whole analysis runs, with every core the machine has: the naming
    // tiers and the index writes on workers of their own; past two cores, the scan and the
    // dominator pass on theirs too.
    const argv = ['refs', truth.objects[0]!.address, 'core', '--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
    const work = testTemp('toma-bundle-')
    try {
      fs.copyFileSync(await fixtureCorePath(entry.id), path.join(work, 'core'))
      const runs = []
      for (const env of [{NODE_DEBUG: 'worker'}, {TOMA_OCLIF: '1'}] as Record<string, string>[]) {
        fs.rmSync(path.join(work, 'core.toma-index'), {force: true})
        runs.push(await runToma(argv, {cwd: work, env}))
      }
      const [bundled, oclif] = runs
      expect(bundled!.stderr).toContain('analysing it first')
      const workers = ['naming/naming-worker.js', 'index/background-write-worker.js', ...(os.availableParallelism() > 2 ? ['graph/scan-worker.js', 'dominators/dominator-worker.js'] : [])]
      for (const worker of workers) {
        expect(bundled!.stderr).toContain(`instantiating Worker. url: ${new URL(`dist/src/${worker}`, ROOT).href}`)
      }
      expect(bundled!.status).toBe(0)
      expect(bundled!.stdout).toBe(oclif!.stdout)
      expect(bundled!.stderr.split('\n').filter(line => line.startsWith('toma:'))).toEqual(oclif!.stderr.split('\n').filter(line => line.startsWith('toma:')))
    } finally {
      fs.rmSync(work, {recursive: true, force: true})
    }
  })
})
