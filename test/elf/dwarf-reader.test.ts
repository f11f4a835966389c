import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {DwarfError} from '../../src/elf/dwarf/cursor.js'
import {readDebugInfo, type DebugInfo} from '../../src/elf/dwarf/debug-info.js'
import {stripAliases, TypeTable, type StructType} from '../../src/elf/dwarf/types.js'
import {DW_AT, DW_FORM, DW_TAG} from '../../src/elf/dwarf/constants.js'
import type {Die} from '../../src/elf/dwarf/info.js'

// The DWARF reader (src/elf/dwarf) on the typesdemo fixture's three files: the -g build (DWARF 5),
// the same source built with -gdwarf-4, and the separate debug file (DWARF 5, zlib SHF_COMPRESSED).
// Globals' addresses are checked against the ELF symbol table (another part of the file, read by
// other code); the two DWARF versions must describe the same layouts. Damaged copies must give a
// DwarfError or a reading, never another error.

const DIR = fileURLToPath(new URL('../../fixtures/typesdemo', import.meta.url))
const FILES = {
  'DWARF 5': path.join(DIR, 'typesdemo'),
  'DWARF 4': path.join(DIR, 'dwarf4', 'typesdemo'),
  'compressed debug file': path.join(DIR, 'stripped', 'typesdemo.debug'),
}
const GLOBALS = ['g_tree', 'g_list', 'g_registry', 'g_conflict_item', 'g_conflict_node']

function read(file: string): DebugInfo {
  const info = readDebugInfo(ElfFile.load(file))
  if (info === null || typeof info === 'number') throw new Error(`${file}: no DWARF read`)
  return info
}

/** A struct's layout as text: members and bases with offsets and type names, one level. */
function layout(s: StructType): string[] {
  return [...s.bases.map(b => `base ${b.name}@${b.offset}`), ...s.members.map(m => `${m.name}@${m.offset}:${m.type.name}`), `size ${s.size}`]
}

describe.each(Object.entries(FILES))('DWARF reader: %s', (_label, file) => {
  const info = read(file)
  const elf = ElfFile.load(file)

  it('reads each global at the address the symbol table gives it, with its type', () => {
    const byName = new Map(info.variables.globals.map(g => [g.name, g]))
    for (const name of GLOBALS) {
      const g = byName.get(name)
      expect(g, name).toBeDefined()
      expect(g!.address).toBe(elf.symbolByName(name)!.value)
    }
    expect(byName.get('g_tree')!.type.name).toBe('TreeNode*')
    expect(byName.get('g_registry')!.type.name).toBe('Registry')
  })

  it('reads main\'s locals at CFA offsets, live over main\'s code', () => {
    const main = info.variables.functions.find(f => f.name === 'main')!
    const mainSym = elf.symbolByName('main')!
    expect(main.ranges).toEqual([[mainSym.value, mainSym.value + mainSym.size]])
    const locals = new Map(main.variables.map(v => [v.name, v]))
    expect(locals.get('local_list')!.type.name).toBe('ListNode*')
    expect(locals.get('local_bag')!.type.name).toBe('Bag')
    // The frame base is the CFA: locals are below it.
    expect(locals.get('local_bag')!.cfaOffset).toBeLessThan(0)
  })

  it('describes the containers\' template arguments (what their elements are)', () => {
    const registry = info.types.structNamed('Registry')!
    const member = (name: string) => stripAliases(registry.members.find(m => m.name === name)!.type) as StructType
    expect(member('heads').params.get('_Tp')!.name).toBe('ListNode*')
    expect(member('byId').params.get('_Key')!.name).toBe('int')
    expect(member('byId').params.get('_Tp')!.name).toBe('Item*')
    expect(member('ids').params.get('_Key')!.name).toBe('long')
    expect(member('queue').params.get('_Tp')!.name).toBe('Item*')
  })
})

describe('the -O2 build: main in two parts (DW_AT_ranges, .debug_rnglists)', () => {
  const file = path.join(DIR, 'o2', 'typesdemo')
  const info = read(file)
  const elf = ElfFile.load(file)
  it('gives main its hot and its cold part, as the symbol table has them (main, main.cold)', () => {
    const main = info.variables.functions.find(f => f.name === 'main')!
    const hot = elf.symbolByName('main')!
    const cold = elf.symbolByName('main.cold')!
    expect([...main.ranges].sort((a, b) => a[0] - b[0])).toEqual([[hot.value, hot.value + hot.size], [cold.value, cold.value + cold.size]].sort((a, b) => a[0]! - b[0]!))
    // local_bag stays at a CFA offset; local_list's location list is not followed.
    expect(main.variables.map(v => v.name)).toContain('local_bag')
    expect(main.variables.map(v => v.name)).not.toContain('local_list')
    expect(info.variables.skipped.locationLists).toBeGreaterThan(0)
  })
})

describe('DWARF 4 and DWARF 5 readings of one program', () => {
  const v5 = read(FILES['DWARF 5'])
  const v4 = read(FILES['DWARF 4'])
  it.each(['Registry', 'Bag', 'TreeNode', 'ListNode', 'Item', 'std::vector<ListNode*, std::allocator<ListNode*> >', 'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >'])('%s has the same layout in both', name => {
    const a = v5.types.structNamed(name)
    expect(a, name).toBeDefined()
    expect(layout(v4.types.structNamed(name)!)).toEqual(layout(a!))
  })
})

describe('damaged DWARF', () => {
  const original = fs.readFileSync(FILES['DWARF 5'])
  const sections = ElfFile.fromBuffer(original, 'typesdemo').sections
  const section = (name: string) => sections.find(s => s.name === name)!

  /** Reads a damaged copy: a reading or a DwarfError, nothing else. */
  const outcome = (buf: Buffer): string => {
    try {
      const info = readDebugInfo(ElfFile.fromBuffer(buf, 'damaged'))
      return info === null ? 'none' : 'read'
    } catch (e) {
      if (e instanceof DwarfError) return 'DwarfError'
      throw e
    }
  }

  it.each(['.debug_info', '.debug_abbrev', '.debug_str'])('random bytes of %s: a reading or one DwarfError (60 copies)', name => {
    const s = section(name)
    let seed = 12345
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    const seen = new Set<string>()
    for (let copy = 0; copy < 60; copy++) {
      const buf = Buffer.from(original)
      for (let k = 0; k < 1 + (copy % 8); k++) buf[s.offset + (next() % s.size)] = next() % 256
      seen.add(outcome(buf))
    }
    expect([...seen].every(o => o === 'read' || o === 'DwarfError')).toBe(true)
    // Damage to the entries' encoding is met (a string section's damage only changes names).
    if (name !== '.debug_str') expect(seen.has('DwarfError')).toBe(true)
  })

  it('a unit length past the section is a DwarfError naming it', () => {
    const buf = Buffer.from(original)
    buf.writeUInt32LE(0x7fffffff, section('.debug_info').offset)
    expect(() => readDebugInfo(ElfFile.fromBuffer(buf, 'damaged'))).toThrow(/\.debug_info: unit at 0 runs past the section/)
  })

  it('a compressed section that does not inflate is a DwarfError naming it', () => {
    const debug = fs.readFileSync(FILES['compressed debug file'])
    const info = ElfFile.fromBuffer(debug, 'typesdemo.debug').sections.find(s => s.name === '.debug_info')!
    expect(info.flags & 0x800).toBe(0x800)
    const buf = Buffer.from(debug)
    buf.fill(0xaa, info.offset + 24, info.offset + 64)
    expect(() => readDebugInfo(ElfFile.fromBuffer(buf, 'typesdemo.debug'))).toThrow(/\.debug_info: does not inflate/)
  })
})

describe('types chained without end', () => {
  /** `count` structs, each holding the next as its one member: a file that nests types past any program's. */
  function chain(count: number): {table: TypeTable; first: Die} {
    const dies = new Map<number, Die>()
    const structs: Die[] = []
    for (let i = 0; i < count; i++) {
      const s: Die = {offset: 1000 + i * 10, tag: DW_TAG.structure_type, parent: null, children: [], attrs: new Map([[DW_AT.name, {form: DW_FORM.string, value: `S${i}`}], [DW_AT.byte_size, {form: DW_FORM.data1, value: 8}]])}
      structs.push(s)
      dies.set(s.offset, s)
    }
    for (let i = 0; i < count; i++) {
      const next = structs[(i + 1) % count]!
      const m: Die = {offset: structs[i]!.offset + 1, tag: DW_TAG.member, parent: structs[i]!, children: [], attrs: new Map([[DW_AT.name, {form: DW_FORM.string, value: 'next'}], [DW_AT.type, {form: DW_FORM.ref4, value: next.offset}], [DW_AT.data_member_location, {form: DW_FORM.data1, value: 0}]])}
      structs[i]!.children.push(m)
      dies.set(m.offset, m)
    }
    return {table: new TypeTable(dies), first: structs[0]!}
  }

  it('a chain of 100,000 nested structs is built to a bounded depth, the rest unknown, without the stack overflowing', () => {
    const {table, first} = chain(100_000)
    const t = table.typeOf(first)
    expect(t?.kind).toBe('struct')
    expect(table.unknown).toBeGreaterThan(0)
  })

  it('a cycle of structs (each holding the next, the last the first) is built once each', () => {
    const {table, first} = chain(3)
    const t = table.typeOf(first) as StructType
    const s1 = t.members[0]!.type as StructType
    const s2 = s1.members[0]!.type as StructType
    expect([t.name, s1.name, s2.name]).toEqual(['S0', 'S1', 'S2'])
    expect(s2.members[0]!.type).toBe(t)
  })
})
