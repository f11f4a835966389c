import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {brotliCorePath, brotliTreePath, FIXTURES} from '../helpers/fixture-core.js'

const PLT = fileURLToPath(new URL('../../fixtures/plt', import.meta.url))
const ARM64 = fileURLToPath(new URL('../../fixtures/arm64', import.meta.url))

/** binutils' `<symbol@plt>` labels of a file's stubs, as fixtures/plt/generate.sh recorded them from objdump -d. */
function objdumpLabels(list: string): string[] {
  return fs.readFileSync(path.join(PLT, list), 'utf8').split('\n').filter(line => line !== '')
}

/** Each stub toma reads from the file, in objdump's form: `address <symbol@plt>:`. */
function stubLabels(file: string): string[] {
  return ElfFile.load(file).pltStubList().map(s => `${s.start.toString(16).padStart(16, '0')} <${s.name}>:`)
}

// Every stub of a whole file is named as binutils names it (bfd's synthetic symbols, which gdb
// shows too): each found by decoding its own jump to its GOT slot and that slot's relocation
// (JUMP_SLOT for .plt and .plt.sec, GLOB_DAT for .plt.got), no stub missing and none extra.
it.each([
  ['Debian 12\'s libtcmalloc.so.4 (x86-64: .plt, .plt.got)', path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4'), 'libtcmalloc.so.4-v2.10-x86-64.objdump-plt.txt', 428],
  ['busydemo (x86-64, a PIE)', path.join(PLT, '..', 'busy', 'busydemo'), 'busydemo-x86-64.objdump-plt.txt', 31],
  ['a library with IBT\'s .plt.sec and 16-byte .plt.got stubs (x86-64)', path.join(PLT, 'libpltibt.so'), 'libpltibt.so.objdump-plt.txt', 4],
  ['busydemo (aarch64)', path.join(ARM64, 'busy-lock-kernel', 'busydemo'), 'busydemo-aarch64.objdump-plt.txt', 35],
])('PLT stubs of %s: every one named as objdump names it', (_what, file, list, count) => {
  const expected = objdumpLabels(list)
  expect(expected).toHaveLength(count)
  expect(stubLabels(file)).toEqual(expected)
})

it('PLT stubs of Debian 12\'s arm64 libtcmalloc_minimal.so.4.5.10: every one named as objdump names it', async () => {
  const sysroot = await brotliTreePath(path.join(ARM64, 'crash-uaf-crash-kernel', 'sysroot'))
  const expected = objdumpLabels('libtcmalloc_minimal.so.4.5.10-aarch64.objdump-plt.txt')
  expect(expected).toHaveLength(255)
  expect(expected).toContain('000000000000d0d0 <_ZN8tcmalloc15CentralFreeList14ReleaseToSpansEPv@plt>:')
  expect(stubLabels(path.join(sysroot, 'usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4.5.10'))).toEqual(expected)
})

// glibc calls its own ifuncs (memcpy's, strlen's) through stubs whose slot an IRELATIVE relocation
// fills, with no symbol: binutils names each by its resolver, `*ABS*+0x…@plt`, and so does toma.
it.each([
  ['Debian 12\'s arm64', path.join(ARM64, 'heapdemo-2.10-kernel', 'sysroot', 'usr/lib/aarch64-linux-gnu/libc.so.6.br'), 'libc.so.6-debian12-aarch64.objdump-plt.txt', 19, 2],
  ['Debian 13\'s x86-64', path.join(FIXTURES, '..', 'sysroots', 'trixie', 'libc.so.6.br'), 'libc.so.6-trixie-x86-64.objdump-plt.txt', 62, 45],
])('PLT stubs of %s libc.so.6, ifuncs\' among them: every one named as objdump names it', async (_what, br, list, count, ifuncs) => {
  const expected = objdumpLabels(list)
  expect(expected).toHaveLength(count)
  expect(expected.filter(line => line.includes('<*ABS*+0x'))).toHaveLength(ifuncs)
  expect(stubLabels(await brotliCorePath(br))).toEqual(expected)
})

// A stub is named only where its bytes prove its slot: the lazy-binding header, and IBT's lazy
// .plt entries (`endbr64; push n; bnd jmp .plt`, whose stubs are .plt.sec's), are no stub.
it('the PLT\'s header and IBT\'s lazy entries get no name', () => {
  const lib = ElfFile.load(path.join(PLT, 'libpltibt.so'))
  const plt = lib.section('.plt')!
  for (let at = plt.addr; at < plt.addr + plt.size; at += 4) expect(lib.pltStubAt(at), `0x${at.toString(16)}`).toBeUndefined()
  const tcmalloc = ElfFile.load(path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4'))
  const header = tcmalloc.section('.plt')!.addr
  expect(tcmalloc.pltStubAt(header)).toBeUndefined()
  expect(tcmalloc.pltStubAt(header + 16 + 15)?.symbol.name).toBe('sem_destroy@plt')
  expect(tcmalloc.pltStubAt(header + 16 + 15)?.offset).toBe(15)
})
