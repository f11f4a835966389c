import {copyFileSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {afterAll, describe, expect, test} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {fileIdentity} from '../../src/elf/file-identity.js'
import {ET_DYN, PT_LOAD, STT_FUNC} from '../../src/elf/constants.js'
import {TomaError} from '../../src/errors.js'
import {
  exists, have, haveBinutils, LIBC, LIBSTDCXX, LIBTCMALLOC, LS, nmDynamic, nmSymtab, readelfBuildId,
  readelfHasSymtab, readelfLoads, readelfRelocOffsets, readelfSections, readelfSoname, run,
} from './tools.js'
import {testTemp} from '../helpers/test-temp.js'

const tmp = testTemp('toma-elf-')
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const systemFiles = [LIBC, LIBSTDCXX, LS].filter(exists)

describe.skipIf(!haveBinutils)('system files against readelf/nm', () => {
  test.each(systemFiles)('%s: build-id, soname and PT_LOADs match readelf', file => {
    const elf = ElfFile.load(file)
    expect(elf.buildId).toBe(readelfBuildId(file))
    expect(elf.buildId).toMatch(/^[0-9a-f]{40}$/)
    expect(elf.soname).toBe(readelfSoname(file))
    const loads = elf.segments.filter(s => s.type === PT_LOAD)
      .map(s => ({offset: s.offset, vaddr: s.vaddr, filesz: s.filesz, memsz: s.memsz}))
    expect(loads).toEqual(readelfLoads(file))
    const sections = readelfSections(file)
    for (const s of elf.sections.slice(1)) {
      const r = sections.get(s.name)
      expect(r, s.name).toBeDefined()
      expect({addr: s.addr, offset: s.offset, size: s.size}).toEqual({addr: r!.addr, offset: r!.offset, size: r!.size})
    }
  })

  test.each(systemFiles)('%s: isStripped agrees with readelf -S', file => {
    expect(ElfFile.load(file).isStripped).toBe(!readelfHasSymtab(file))
  })

  test.skipIf(!exists(LIBC))('libc: malloc by name equals nm -D, and symbolAt(malloc+3) is malloc+3', () => {
    const elf = ElfFile.load(LIBC)
    const expected = nmDynamic(LIBC).get('malloc')
    expect(expected).toHaveLength(1)
    const malloc = elf.symbolByName('malloc')!
    expect(malloc).toBeDefined()
    expect(malloc.value).toBe(expected![0])
    expect(malloc.type).toBe(STT_FUNC)
    expect(malloc.size).toBeGreaterThan(3)
    const hit = elf.symbolAt(malloc.value + 3)!
    // __libc_malloc aliases malloc; the plainer name is preferred
    expect(hit.symbol.name).toBe('malloc')
    expect(hit.symbol.value).toBe(malloc.value)
    expect(hit.offset).toBe(3)
    expect(elf.symbolAt(malloc.value)).toEqual({symbol: hit.symbol, offset: 0})
  })

  test.skipIf(!exists(LIBC))('libc: every dynamic FUNC name resolves to one of nm -D values', () => {
    const elf = ElfFile.load(LIBC)
    const nm = nmDynamic(LIBC)
    let checked = 0
    for (const [name, values] of nm) {
      const sym = elf.symbolByName(name)
      expect(sym, name).toBeDefined()
      expect(values, name).toContain(sym!.value)
      checked++
    }
    expect(checked).toBeGreaterThan(1000)
  })

  test.skipIf(!exists(LIBSTDCXX))('libstdc++: _ZTV prefix is non-empty, sorted, and the same names as nm -D', () => {
    const elf = ElfFile.load(LIBSTDCXX)
    const vtables = elf.symbolsByPrefix('_ZTV')
    expect(vtables.length).toBeGreaterThan(0)
    const names = vtables.map(s => s.name)
    expect(names.every(n => n.startsWith('_ZTV'))).toBe(true)
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    const nm = nmDynamic(LIBSTDCXX)
    const expected = [...nm.keys()].filter(n => n.startsWith('_ZTV')).sort()
    expect([...new Set(names)].sort()).toEqual(expected)
    for (const s of vtables) expect(nm.get(s.name)).toContain(s.value)
    expect(elf.symbolsByPrefix('_ZTV_no_such_prefix')).toEqual([])
  })

  test.skipIf(!exists(LIBSTDCXX))('libstdc++: symbolAt inside a vtable gives that vtable', () => {
    const elf = ElfFile.load(LIBSTDCXX)
    const vt = elf.symbolsByPrefix('_ZTV').find(s => s.size >= 24)!
    const hit = elf.symbolAt(vt.value + 16)!
    expect(hit.symbol.value).toBe(vt.value)
    expect(hit.offset).toBe(16)
  })
})

describe.skipIf(!exists(LIBC))('readVirtual', () => {
  test('matches the file bytes of .rodata, zero-fills beyond filesz, undefined when unmapped', () => {
    const elf = ElfFile.load(LIBC)
    const bytes = readFileSync(LIBC)
    const rodata = elf.section('.rodata')!
    expect(elf.readVirtual(rodata.addr + 16, 64)).toEqual(bytes.subarray(rodata.offset + 16, rodata.offset + 80))

    const bssSeg = elf.segments.find(s => s.type === PT_LOAD && s.memsz > s.filesz + 16)!
    expect(bssSeg).toBeDefined()
    const straddle = elf.readVirtual(bssSeg.vaddr + bssSeg.filesz - 8, 24)!
    expect(straddle.subarray(0, 8)).toEqual(bytes.subarray(bssSeg.offset + bssSeg.filesz - 8, bssSeg.offset + bssSeg.filesz))
    expect(straddle.subarray(8)).toEqual(Buffer.alloc(16))

    const end = Math.max(...elf.segments.filter(s => s.type === PT_LOAD).map(s => s.vaddr + s.memsz))
    expect(elf.readVirtual(end, 8)).toBeUndefined()
    expect(elf.readVirtual(end - 4, 8)).toBeUndefined()
  })
})

describe.skipIf(!exists(LIBTCMALLOC) || !haveBinutils)('libtcmalloc (skipped when libgoogle-perftools-dev is not installed)', () => {
  test('version string, pageheap_lock, TPOFF64 GOT slot of the thread-local data', () => {
    const elf = ElfFile.load(LIBTCMALLOC)
    expect(elf.type).toBe(ET_DYN)
    expect(elf.buildId).toBe(readelfBuildId(LIBTCMALLOC))

    const needle = Buffer.from('gperftools 2.10')
    const hits = elf.findBytes(needle, '.rodata')
    expect(hits.length).toBeGreaterThan(0)
    for (const at of hits) expect(elf.readVirtual(at, needle.length)).toEqual(needle)
    expect(elf.findBytes(needle)).toEqual(expect.arrayContaining(hits))
    expect(elf.readCString(hits[0])).toMatch(/^gperftools 2\.10/)

    const lock = elf.symbolByName('_ZN8tcmalloc6Static14pageheap_lock_E')
    expect(lock).toBeDefined()
    expect(nmDynamic(LIBTCMALLOC).get('_ZN8tcmalloc6Static14pageheap_lock_E')).toEqual([lock!.value])

    const tls = '_ZN8tcmalloc11ThreadCache17threadlocal_data_E'
    const slots = readelfRelocOffsets(LIBTCMALLOC, 'R_X86_64_TPOFF64', tls)
    expect(slots).toHaveLength(1)
    expect(elf.tpoffGotSlot(tls)).toBe(slots[0])
    expect(elf.tpoffGotSlot('malloc')).toBeUndefined()
  })
})

describe.skipIf(!have('gcc') || !have('objcopy') || !haveBinutils)('a freshly built unstripped program', () => {
  test('.symtab locals, stripping and .gnu_debuglink', () => {
    const src = path.join(tmp, 'prog.c')
    const exe = path.join(tmp, 'prog')
    writeFileSync(src, 'int counter = 1;\nstatic int helper(int x) { return x * 3 + counter; }\n' +
      'int main(void) { return helper(counter); }\n')
    run('gcc', ['-O0', '-g', '-o', exe, src])
    const elf = ElfFile.load(exe)
    expect(elf.isStripped).toBe(false)
    const nm = nmSymtab(exe)
    for (const name of ['main', 'helper', 'counter']) {
      expect(elf.symbolByName(name)?.value, name).toBe(nm.get(name)![0])
    }
    const helper = elf.symbolByName('helper')!
    expect(elf.symbolAt(helper.value + 1)).toEqual({symbol: helper, offset: 1})
    expect(elf.debugLink).toBeNull()

    const debug = path.join(tmp, 'prog.debug')
    const stripped = path.join(tmp, 'prog.stripped')
    run('objcopy', ['--only-keep-debug', exe, debug])
    run('objcopy', ['--strip-all', `--add-gnu-debuglink=${debug}`, exe, stripped])
    const s = ElfFile.load(stripped)
    expect(s.isStripped).toBe(!readelfHasSymtab(stripped))
    expect(s.isStripped).toBe(true)
    expect(s.symbolByName('helper')).toBeUndefined()
    expect(s.debugLink?.file).toBe('prog.debug')
    if (typeof zlib.crc32 === 'function') expect(s.debugLink?.crc).toBe(zlib.crc32(readFileSync(debug)))
    expect(s.buildId).toBe(readelfBuildId(stripped))

    // the separate debug file still has the .symtab (its other sections are NOBITS)
    const d = ElfFile.load(debug)
    expect(d.isStripped).toBe(false)
    expect(d.buildId).toBe(elf.buildId)
    expect(d.symbolByName('helper')).toEqual(helper)
  })
})

describe('errors are one-line TomaErrors', () => {
  function failure(fn: () => unknown): TomaError {
    try {
      fn()
    } catch (err) {
      expect(err).toBeInstanceOf(TomaError)
      expect((err as Error).message).not.toContain('\n')
      return err as TomaError
    }
    throw new Error('expected a TomaError')
  }
  const small = [LS, LIBC].find(exists)!

  test('missing file', () => {
    const p = path.join(tmp, 'nope.so')
    expect(failure(() => ElfFile.load(p)).message).toBe(`cannot open ${p}: no such file`)
  })

  test('a directory', () => {
    expect(failure(() => ElfFile.load(tmp)).message).toMatch(/is a directory|not a regular file \(a directory\)/)
  })

  test('a text file', () => {
    const p = path.join(tmp, 'notes.txt')
    writeFileSync(p, 'hello, this is not ELF\n')
    expect(failure(() => ElfFile.load(p)).message).toBe(`${p} is not an ELF file`)
    const empty = path.join(tmp, 'empty')
    writeFileSync(empty, '')
    expect(failure(() => ElfFile.load(empty)).message).toBe(`${empty} is not an ELF file`)
  })

  test('an ET_CORE file', () => {
    const p = path.join(tmp, 'core.fake')
    copyFileSync(small, p)
    const buf = readFileSync(p)
    buf.writeUInt16LE(4, 16)
    writeFileSync(p, buf)
    expect(failure(() => ElfFile.load(p)).message).toBe(`${p} is a core file, not a module`)
    // said first, even when the rest of the file is not there
    expect(failure(() => ElfFile.fromBuffer(buf.subarray(0, 64), 'c')).message).toBe('c is a core file, not a module')
  })

  test('a 32-bit or big-endian ELF', () => {
    const buf = Buffer.from(readFileSync(small))
    buf[4] = 1
    expect(failure(() => ElfFile.fromBuffer(buf, 'x32')).message).toMatch(/^x32 is a 32-bit .*only ELF64 little-endian x86-64 and aarch64$/)
  })

  test('a truncated ELF (first 100 bytes, and cut in the middle)', () => {
    const p = path.join(tmp, 'trunc.so')
    const whole = readFileSync(small)
    writeFileSync(p, whole.subarray(0, 100))
    expect(failure(() => ElfFile.load(p)).message).toMatch(new RegExp(`^${p} is truncated: `))
    writeFileSync(p, whole.subarray(0, 40))
    expect(failure(() => ElfFile.load(p)).message).toMatch(/is truncated/)
    // section headers sit at the end: half the file loses them
    expect(failure(() => ElfFile.fromBuffer(whole.subarray(0, whole.length >> 1), 'half')).message).toMatch(/^half is truncated: /)
  })
})

describe.skipIf(!exists(LIBC))('a module file known from an index (ElfFile.loadKnown, issue 13: start-up)', () => {
  test('the same file (size, mtime, inode) is not read for its build-id; a changed one is read again', () => {
    const file = path.join(tmp, 'known-libc.so.6')
    copyFileSync(LIBC, file)
    const real = ElfFile.load(file)
    const identity = fileIdentity(file)!
    // A record whose build-id is not the file's: taken as it is, which shows the file was not read for it…
    const recorded = 'ab'.repeat(20)
    const known = new Map([[file, {...identity, buildId: recorded}]])
    const lazy = ElfFile.loadKnown(file, known)
    expect(lazy.checkedBefore).toBe(true)
    expect(lazy.buildId).toBe(recorded)
    // …and reading anything more of it checks that the file is still the build recorded.
    expect(() => lazy.sections).toThrow(TomaError)
    expect(() => lazy.sections).toThrow(/changed while toma was using it \(build-id [0-9a-f]{40}, was abab/)
    // With the right build-id recorded, the lazily read file is the file.
    const right = ElfFile.loadKnown(file, new Map([[file, {...identity, buildId: real.buildId}]]))
    expect(right.buildId).toBe(real.buildId)
    expect(right.soname).toBe(real.soname)
    expect(right.sections).toEqual(real.sections)
    expect(right.symbolAt(real.symbolByName('malloc')!.value + 3)).toEqual(real.symbolAt(real.symbolByName('malloc')!.value + 3))
    // Another mtime: not the file recorded, so it is read (its own build-id).
    const later = new Date(identity.mtimeMs + 5000)
    utimesSync(file, later, later)
    const reread = ElfFile.loadKnown(file, known)
    expect(reread.checkedBefore).toBe(false)
    expect(reread.buildId).toBe(real.buildId)
  })
})
