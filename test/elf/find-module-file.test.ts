import {copyFileSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, test} from 'vitest'
import {checkBuildId, findModuleFile} from '../../src/elf/find-module-file.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {TomaError} from '../../src/errors.js'
import {exists, LIBC, LIBSTDCXX} from './tools.js'
import {testTemp} from '../helpers/test-temp.js'

describe.skipIf(!exists(LIBC) || !exists(LIBSTDCXX))('findModuleFile', () => {
  let tmp: string
  let libcId: string
  let otherId: string
  const corePath = LIBC // the path a core's NT_FILE note would name

  beforeAll(() => {
    tmp = testTemp('toma-find-')
    libcId = ElfFile.load(LIBC).buildId!
    otherId = ElfFile.load(LIBSTDCXX).buildId!
    // a sysroot holding the right libc, a sysroot holding a wrong one, a search dir, a junk file
    mkdirSync(path.join(tmp, 'good', path.dirname(corePath)), {recursive: true})
    copyFileSync(LIBC, path.join(tmp, 'good', corePath))
    mkdirSync(path.join(tmp, 'bad', path.dirname(corePath)), {recursive: true})
    copyFileSync(LIBSTDCXX, path.join(tmp, 'bad', corePath))
    mkdirSync(path.join(tmp, 'libs'))
    copyFileSync(LIBC, path.join(tmp, 'libs', 'libc.so.6'))
    mkdirSync(path.join(tmp, 'junk'))
    writeFileSync(path.join(tmp, 'junk', 'libc.so.6'), 'not an ELF\n')
    copyFileSync(LIBSTDCXX, path.join(tmp, 'wrong-libc.so.6'))
  })
  afterAll(() => rmSync(tmp, {recursive: true, force: true}))

  test('sysroot first, verified by build-id', () => {
    const r = findModuleFile({corePath, buildId: libcId}, {sysroot: path.join(tmp, 'good'), solibSearchPath: [path.join(tmp, 'libs')]})
    expect(r.file).not.toBeNull()
    if (!r.file) return
    expect(r).toMatchObject({how: 'sysroot', path: path.join(tmp, 'good', corePath), verified: true})
  })

  test('a wrong file in the sysroot is skipped with the reason, and the search goes on', () => {
    const r = findModuleFile({corePath, buildId: libcId}, {sysroot: path.join(tmp, 'bad'), solibSearchPath: [path.join(tmp, 'junk'), path.join(tmp, 'libs')]})
    if (!r.file) throw new Error(r.reason)
    expect(r).toMatchObject({how: 'solib-search-path', path: path.join(tmp, 'libs', 'libc.so.6'), verified: true})
  })

  test('falls back to the core path itself', () => {
    const r = findModuleFile({corePath, buildId: libcId}, {solibSearchPath: [path.join(tmp, 'nowhere')]})
    if (!r.file) throw new Error(r.reason)
    expect(r).toMatchObject({how: 'path', path: corePath, verified: true})
  })

  test('nothing usable: file null, every attempt and why in tried', () => {
    const r = findModuleFile({corePath, buildId: 'ab'.repeat(20)},
      {sysroot: path.join(tmp, 'nowhere'), solibSearchPath: [path.join(tmp, 'junk'), path.join(tmp, 'libs')]})
    expect(r.file).toBeNull()
    if (r.file) return
    expect(r.tried).toHaveLength(4)
    expect(r.tried[0]).toBe(`${path.join(tmp, 'nowhere', corePath)}: not found`)
    expect(r.tried[1]).toMatch(/is not an ELF file$/)
    expect(r.tried[2]).toContain(`build-id ${libcId} does not match ${'ab'.repeat(20)}`)
    expect(r.tried[3]).toContain(`${corePath}: build-id ${libcId} does not match`)
    expect(r.reason).toContain('libc.so.6: no file with build-id')
    expect(r.reason).not.toContain('\n')
  })

  test('no build-id in the core: first file found, not verified', () => {
    const r = findModuleFile({corePath, buildId: null}, {sysroot: path.join(tmp, 'bad')})
    if (!r.file) throw new Error(r.reason)
    expect(r).toMatchObject({how: 'sysroot', verified: false})
  })

  test('explicit by basename, exact path or role; " (deleted)" is ignored', () => {
    const good = path.join(tmp, 'libs', 'libc.so.6')
    for (const explicit of [new Map([['libc.so.6', good]]), new Map([[corePath, good]])]) {
      const r = findModuleFile({corePath: corePath + ' (deleted)', buildId: libcId}, {sysroot: path.join(tmp, 'bad'), explicit})
      expect(r).toMatchObject({how: 'explicit', path: good, verified: true})
    }
    const byRole = findModuleFile({corePath, buildId: libcId, role: 'libc'}, {explicit: new Map([['libc', good]])})
    expect(byRole).toMatchObject({how: 'explicit', verified: true})
    const unverified = findModuleFile({corePath, buildId: null}, {explicit: new Map([['libc.so.6', good]])})
    expect(unverified).toMatchObject({how: 'explicit', verified: false})
  })

  test('an explicit file with another build-id is a TomaError naming both ids and paths', () => {
    const wrong = path.join(tmp, 'wrong-libc.so.6')
    let err: unknown
    try {
      findModuleFile({corePath, buildId: libcId}, {explicit: new Map([['libc.so.6', wrong]])})
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(TomaError)
    expect((err as Error).message).toBe(`libc.so.6: build-id ${otherId} of ${wrong} does not match ${libcId} in the core`)
  })

  test('an explicit file that is missing or not ELF is the loader\'s TomaError', () => {
    const missing = path.join(tmp, 'missing.so')
    expect(() => findModuleFile({corePath, buildId: libcId}, {explicit: new Map([['libc.so.6', missing]])}))
      .toThrow(new TomaError(`cannot open ${missing}: no such file`))
    expect(() => findModuleFile({corePath, buildId: libcId}, {explicit: new Map([['libc.so.6', path.join(tmp, 'junk', 'libc.so.6')]])}))
      .toThrow(TomaError)
  })

  test('checkBuildId', () => {
    const f = ElfFile.load(LIBC)
    expect(checkBuildId(f, libcId)).toBe('match')
    expect(checkBuildId(f, libcId.toUpperCase())).toBe('match')
    expect(checkBuildId(f, otherId)).toBe('mismatch')
    expect(checkBuildId(f, null)).toBe('unverifiable')
  })
})
