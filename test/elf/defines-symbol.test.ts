import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {FIXTURES} from '../helpers/fixture-core.js'

// definesSymbol answers from .dynsym when it can (--tcmalloc's check on every query), and must
// answer as symbolByName does: for exported names, names only in .symtab, and absent ones.
describe('definesSymbol', () => {
  it('answers as symbolByName does', () => {
    for (const name of ['libtcmalloc.so.4', 'heapdemo']) {
      const file = path.join(FIXTURES, 'v2.10-shared', name)
      const probe = ElfFile.load(file)
      // heapdemo keeps its .symtab: its local symbols (build_pool) are not in .dynsym.
      const local = probe.symbolsByPrefix('').filter(s => s.bind === 0).map(s => s.name)
      for (const symbol of ['tc_malloc', 'main', 'no_such_symbol_anywhere', ...local.slice(0, 5)]) {
        expect(ElfFile.load(file).definesSymbol(symbol), `${name} ${symbol}`).toBe(probe.symbolByName(symbol) !== undefined)
      }
    }
    expect(ElfFile.load(path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4')).definesSymbol('tc_malloc')).toBe(true)
    expect(ElfFile.load(path.join(FIXTURES, 'v2.10-shared', 'heapdemo')).definesSymbol('tc_malloc')).toBe(false)
    expect(ElfFile.load(path.join(FIXTURES, 'v2.10-shared', 'heapdemo')).definesSymbol('_ZL10build_poolv')).toBe(true)
  })
})
