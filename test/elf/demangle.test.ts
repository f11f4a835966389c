import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {demangle, demangleWithWasm} from '../../src/elf/demangle.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {FIXTURES} from '../helpers/fixture-core.js'

// demangle reads a plain class's vtable name (`_ZTVN3app8CustomerE`) itself, without the WASM
// demangler (src/elf/demangle.ts says why): it must answer exactly as the demangler does.
describe('vtable names read without the demangler', () => {
  it('match the demangler on every vtable symbol of the fixture programs and libstdc++', () => {
    const files = [
      path.join(FIXTURES, 'v2.10-shared', 'heapdemo'),
      path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4'),
      path.join(FIXTURES, '..', 'pairs', 'v2.10-diff', 'diffdemo'),
      '/usr/lib/x86_64-linux-gnu/libstdc++.so.6',
    ].filter(f => fs.existsSync(f))
    const names = [...new Set(files.flatMap(f => ElfFile.load(f).symbolsByPrefix('_ZTV').map(s => s.name)))]
    const plain = names.filter(n => /^_ZTV(N\d|\d)/.test(n))
    // Both kinds must be there: plain classes (the shortcut) and others (std::, templates).
    expect(plain.length).toBeGreaterThan(5)
    expect(names.length).toBeGreaterThan(plain.length)
    for (const n of names) expect(demangle(n), n).toBe(demangleWithWasm(n))
  })

  it('leave malformed or other forms to the demangler', () => {
    const names = ['_ZTVN12_GLOBAL__N_15ThingE', '_ZTV6Widget', '_ZTVN3fooE', '_ZTV3ab', '_ZTV03abc', '_ZTVN3app8CustomerE1', '_ZTVN3foo3barIiEE', '_ZTVNK3app1AE', '_ZTVSt9exception']
    for (const n of names) expect(demangle(n), n).toBe(demangleWithWasm(n))
    expect(demangle('_ZTVN3app8CustomerE')).toBe('vtable for app::Customer')
  })
})

// A version or a PLT stub's `@plt` after a mangled name: the name demangled and the suffix kept, as
// c++filt does (binutils 2.40: `printf '%s\n' NAME... | c++filt` gave the right-hand sides).
describe('a mangled name with a suffix', () => {
  it('is demangled as c++filt demangles it', () => {
    expect(demangle('_ZN8tcmalloc15CentralFreeList14ReleaseToSpansEPv@plt')).toBe('tcmalloc::CentralFreeList::ReleaseToSpans(void*)@plt')
    expect(demangle('_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4')).toBe('std::vector<int, std::allocator<int> >::push_back(int const&)@@GLIBCXX_3.4')
    expect(demangle('exp@plt')).toBe('exp@plt')
  })
})
