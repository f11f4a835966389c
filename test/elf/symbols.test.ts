import {describe, expect, test} from 'vitest'
import {SymbolIndex} from '../../src/elf/symbols.js'
import type {ElfSymbol} from '../../src/elf/elf-file.js'
import {STB_GLOBAL, STB_LOCAL, STT_FUNC, STT_NOTYPE, STT_OBJECT, STT_TLS} from '../../src/elf/constants.js'

// Ranking rules on a hand-made table (the same rules are checked on real files in elf-file.test.ts
// and on fixture cores in test/program/names.test.ts).
const sym = (name: string, value: number, size: number, type = STT_FUNC, bind = STB_GLOBAL, shndx = 1): ElfSymbol =>
  ({name, value, size, type, bind, shndx})
const t = (list: ElfSymbol[], hidden = false) => list.map(s => ({sym: s, hidden}))

describe('SymbolIndex', () => {
  const outer = sym('outer', 0x1000, 0x100)
  const inner = sym('inner', 0x1040, 0x10)
  const after = sym('after', 0x1200, 0x10)
  const label = sym('label', 0x1300, 0, STT_NOTYPE)
  const bare = sym('bare', 0x1400, 0, STT_FUNC)
  const data = sym('table', 0x3000, 0x40, STT_OBJECT, STB_LOCAL, 2)
  const tls = sym('tlsvar', 0x10, 8, STT_TLS, STB_GLOBAL, 2)
  const undef = sym('undef', 0, 0, STT_FUNC, STB_GLOBAL, 0)
  const index = new SymbolIndex([t([outer, inner, after, label, bare, data, tls, undef])])

  test('innermost containing symbol wins, then the outer one around it', () => {
    expect(index.at(0x1044)).toEqual({symbol: inner, offset: 4})
    expect(index.at(0x1050)).toEqual({symbol: outer, offset: 0x50})
  })

  test('outside every sized symbol there is no name, however near a symbol below is', () => {
    expect(index.at(0x1100)).toBeUndefined() // one past outer's end
    expect(index.at(0x1280)).toBeUndefined() // past 'after'
    expect(index.at(0x1410)).toBeUndefined() // past the size-0 'bare'
    expect(index.at(0x3080)).toBeUndefined() // past 'table'
    expect(index.at(0x0fff)).toBeUndefined()
    expect(index.at(0x1300)).toBeUndefined() // NOTYPE labels never name an address
  })

  test('a size-0 code or data symbol names its own address only', () => {
    expect(index.at(0x1400)).toEqual({symbol: bare, offset: 0})
    expect(index.at(0x3010)).toEqual({symbol: data, offset: 0x10})
  })

  test('TLS and undefined symbols are found by name only when defined', () => {
    expect(index.at(0x10)).toBeUndefined()
    expect(index.byName('tlsvar')).toEqual(tls)
    expect(index.byName('undef')).toBeUndefined()
  })

  test('name preference: first table, then global, then default version', () => {
    const local = sym('x', 0x1000, 4, STT_FUNC, STB_LOCAL)
    const global = sym('x', 0x1100, 4)
    const dynOld = sym('y', 0x1200, 4), dynNew = sym('y', 0x1300, 4)
    const i = new SymbolIndex([t([local]), [...t([global]), ...t([dynOld], true), ...t([dynNew])]])
    expect(i.byName('x')).toBe(local)
    expect(i.byName('y')).toBe(dynNew)
    const j = new SymbolIndex([[...t([local]), ...t([global])]])
    expect(j.byName('x')).toBe(global)
  })

  test('aliases: the plainer name is reported for an address', () => {
    const a = sym('__libc_thing', 0x1800, 8), b = sym('thing', 0x1800, 8)
    for (const order of [[a, b], [b, a]]) {
      expect(new SymbolIndex([t(order)]).at(0x1801)?.symbol.name).toBe('thing')
    }
  })

  test('prefix search is sorted and bounded', () => {
    expect(index.byPrefix('a').map(s => s.name)).toEqual(['after'])
    expect(index.byPrefix('').map(s => s.name)).toEqual(['after', 'bare', 'inner', 'label', 'outer', 'table', 'tlsvar'])
    expect(index.byPrefix('zz')).toEqual([])
  })
})
