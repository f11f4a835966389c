import fs from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, test} from 'vitest'
import {Core} from '../../src/core/core.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {resolveModuleName} from '../../src/elf/resolve-module-name.js'
import {FIXTURES, fixtureCorePath, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// --exe and --tcmalloc: a bare name is found like any module file; a file that is not the
// core's, or a --tcmalloc file without TCMalloc, is one line on stderr.

// created when a test of this file runs (a fully skipped file makes none), under the run's temp root
let tmp = ''
beforeAll(() => {
  tmp = testTemp('flags-')
})

const fixture = (id: string) => fixtureIndex().find(f => f.id === id)!
const inFixture = (id: string, file: string) => path.join(FIXTURES, id, file)

function expectOneLine(r: {status: number | null; stderr: string}, pattern: RegExp): void {
  expect(r.status).not.toBe(0)
  const lines = r.stderr.trim().split('\n')
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(r.stderr).not.toMatch(/\n\s+at /)
}

describe('a bare --tcmalloc name', () => {
  test('is found along --solib-search-path by the soname the user typed, and checked by build-id', async () => {
    const entry = fixture('v2.10-minimal')
    const core = await fixtureCorePath(entry.id)
    const dir = path.join(FIXTURES, entry.id)
    const r = await runToma(['info', core, '--tcmalloc', 'libtcmalloc_minimal.so.4', '--solib-search-path', `/nonexistent:${dir}`, '--json'])
    expect(r.status, r.stderr).toBe(0)
    const lib = JSON.parse(r.stdout).modules.find((m: {path: string}) => /libtcmalloc_minimal/.test(m.path))
    expect(lib).toMatchObject({file: path.join(dir, 'libtcmalloc_minimal.so.4'), how: 'explicit', verified: true})
  })

  test('is found in the current folder when nothing else has it, and is the file the core mapped (2.16)', async () => {
    const entry = fixture('v2.16-minimal')
    const core = await fixtureCorePath(entry.id)
    const r = await runToma(['info', core, '--tcmalloc', entry.tcmalloc!, '--json'], {cwd: path.join(FIXTURES, entry.id)})
    expect(r.status, r.stderr).toBe(0)
    const lib = JSON.parse(r.stdout).modules.find((m: {path: string}) => /libtcmalloc_minimal/.test(m.path))
    // the core's own path (a sysroot on the machine that made the fixtures) wins when it exists;
    // either way the file is the one the core mapped
    expect(lib).toMatchObject({how: 'explicit', verified: true})
    expect(ElfFile.load(lib.file).buildId).toBe(lib.buildId)
  })

  test('resolution order: sysroot, search path, the core\'s folder, the current folder last; other builds passed over', () => {
    const lib = inFixture('v2.10-minimal', 'libtcmalloc_minimal.so.4')
    const other = inFixture('v2.16-minimal', 'libtcmalloc_minimal.so.4')
    const id = ElfFile.load(lib).buildId
    const modules = [{path: '/opt/app/lib/libtcmalloc_minimal.so.4.5.10', buildId: id}]
    const root = path.join(tmp, 'order')
    const place = (p: string, from = lib) => {
      fs.mkdirSync(path.dirname(p), {recursive: true})
      fs.copyFileSync(from, p)
      return p
    }
    const cwd = place(path.join(root, 'cwd', 'libtcmalloc_minimal.so.4'))
    const opts = {sysroot: path.join(root, 'sysroot'), solibSearchPath: [path.join(root, 'wrong'), path.join(root, 'solib')]}
    const resolve = () => resolveModuleName('--tcmalloc', 'libtcmalloc_minimal.so.4', modules, opts, path.dirname(cwd))
    expect(resolve()).toBe(cwd)
    place(path.join(root, 'wrong', 'libtcmalloc_minimal.so.4'), other) // same name, another build
    expect(resolve()).toBe(cwd)
    const solib = place(path.join(root, 'solib', 'libtcmalloc_minimal.so.4.5.10'))
    expect(resolve()).toBe(solib)
    const sysroot = place(path.join(root, 'sysroot', 'opt/app/lib/libtcmalloc_minimal.so.4'))
    expect(resolve()).toBe(sysroot)
    // a soname unlike the file's name (libpthread.so.0 for libpthread-2.31.so): found by build-id
    const renamed = [{path: '/opt/app/lib/libtcmalloc_minimal-2.10.so', buildId: id}]
    const bySoname = () => resolveModuleName('--tcmalloc', 'libtcmalloc_minimal.so.4', renamed, {solibSearchPath: [path.join(root, 'wrong'), path.join(root, 'soname')]}, path.join(root, 'nowhere'))
    expect(bySoname).toThrow(/no module of the core has that name, and no such file in the current folder/) // only another build there
    const soname = place(path.join(root, 'soname', 'libtcmalloc_minimal.so.4'))
    expect(bySoname()).toBe(soname)
    // a path is a path, not a name
    expect(resolveModuleName('--tcmalloc', './x.so', modules, opts, root)).toBe('./x.so')
  })
})

test('--debug-file-directory: info names the debug file a stripped executable uses', async () => {
  const entry = fixture('v2.10-stripped')
  // copied alone: a debug file committed beside the fixture must not be found by debuglink
  const exe = path.join(tmp, 'alone', 'heapdemo')
  fs.mkdirSync(path.dirname(exe), {recursive: true})
  fs.copyFileSync(inFixture(entry.id, 'heapdemo'), exe)
  const id = ElfFile.load(exe).buildId!
  const dir = path.join(tmp, 'debug')
  const debug = path.join(dir, '.build-id', id.slice(0, 2), `${id.slice(2)}.debug`)
  fs.mkdirSync(path.dirname(debug), {recursive: true})
  const committed = inFixture(entry.id, 'heapdemo.debug')
  fs.copyFileSync(fs.existsSync(committed) ? committed : inFixture('v2.10-shared', 'heapdemo'), debug) // same build-id
  const core = await fixtureCorePath(entry.id)
  const args = ['info', core, '--exe', exe, '--tcmalloc', inFixture(entry.id, 'libtcmalloc.so.4'), '--json']
  const withDebug = await runToma([...args, '--debug-file-directory', `/nonexistent:${dir}`])
  expect(withDebug.status, withDebug.stderr).toBe(0)
  const module = (r: {stdout: string}) => JSON.parse(r.stdout).modules.find((m: {path: string}) => path.basename(m.path) === 'heapdemo')
  expect(module(withDebug).debugFile).toEqual({path: debug, how: 'build-id'})
  const without = await runToma([...args, '--debug-file-directory', '/nonexistent'])
  expect(module(without).debugFile).toBeNull()
})

describe('module flags that do not fit the core: one line on stderr', () => {
  test('a --tcmalloc library that the core does not map', async () => {
    const core = await fixtureCorePath('v2.10-shared')
    const given = ElfFile.load(inFixture('v2.16-shared', 'libtcmalloc.so.4')).buildId!
    const mapped = ElfFile.load(inFixture('v2.10-shared', 'libtcmalloc.so.4')).buildId!
    expect(given).not.toBe(mapped)
    expectOneLine(await runToma(['info', core, '--tcmalloc', inFixture('v2.16-shared', 'libtcmalloc.so.4')]),
      new RegExp(`^toma: --tcmalloc .*v2\\.16-shared/libtcmalloc\\.so\\.4 is not mapped in the core: build-id ${given} .* does not match ${mapped} in the core \\(libtcmalloc\\.so\\.4\\.`))
  })

  test('a --tcmalloc file with no TCMalloc in it, even one the core maps', async () => {
    const core = await fixtureCorePath('v2.10-shared')
    expectOneLine(await runToma(['info', core, '--tcmalloc', inFixture('v2.10-shared', 'heapdemo')]), /--tcmalloc .*heapdemo: no TCMalloc in this file/)
    const opened = Core.open(core)
    const libc = opened.modules.find(m => path.basename(m.path) === 'libc.so.6')!
    opened.close()
    if (fs.existsSync(libc.path)) {
      expectOneLine(await runToma(['info', core, '--tcmalloc', libc.path]), /--tcmalloc .*libc\.so\.6: no TCMalloc in this file/)
    }
  })

  test('an --exe that the core does not map', async () => {
    const core = await fixtureCorePath('v2.10-shared')
    const given = ElfFile.load(inFixture('v2.10-static', 'heapdemo')).buildId!
    expectOneLine(await runToma(['info', core, '--exe', inFixture('v2.10-static', 'heapdemo')]), new RegExp(`^toma: --exe .* is not mapped in the core: build-id ${given} `))
  })

  test('a bare name that neither the core nor the current folder has', async () => {
    const core = await fixtureCorePath('v2.10-shared')
    expectOneLine(await runToma(['info', core, '--tcmalloc', 'libnothing.so.1'], {cwd: tmp}), /--tcmalloc libnothing\.so\.1: no module of the core has that name, and no such file in the current folder/)
  })
})
