import {describe, expect, it} from 'vitest'
import {fileURLToPath} from 'node:url'
import {ElfFile} from '../../src/elf/elf-file.js'
import {abbrevByCode, parseAbbrevTable} from '../../src/elf/dwarf/abbrev.js'
import {parseUnits} from '../../src/elf/dwarf/info.js'
import {dwarfSections} from '../../src/elf/dwarf/sections.js'

// parseUnits' selection: a unit is parsed past its own DIE only when its name is wanted and the
// byte budget allows; the others are skipped by their length. typesdemo has one compile unit.
const FILE = fileURLToPath(new URL('../../fixtures/typesdemo/typesdemo', import.meta.url))

describe('unit selection', () => {
  const sections = dwarfSections(ElfFile.load(FILE))!
  const everything = parseUnits(sections)

  it('with no selection every unit is parsed, as before', () => {
    expect(everything).toMatchObject({skipped: 0, exhausted: false})
    expect(everything.units.length).toBe(1)
    expect(everything.parsedBytes).toBe(sections.info.length)
  })

  it('a unit whose name is wanted is parsed whole; one not wanted leaves no DIE behind', () => {
    const wanted = parseUnits(sections, {named: name => name.endsWith('/typesdemo.cpp')})
    expect(wanted.dies.size).toBe(everything.dies.size)
    const unwanted = parseUnits(sections, {named: name => name.endsWith('/other.cpp')})
    expect(unwanted).toMatchObject({units: [], skipped: 1, parsedBytes: 0, exhausted: false})
    expect(unwanted.dies.size).toBe(0)
  })

  it('a unit past the byte budget ends the reading, which says so', () => {
    const starved = parseUnits(sections, {maxBytes: sections.info.length - 1})
    expect(starved).toMatchObject({units: [], parsedBytes: 0, exhausted: true})
    expect(starved.dies.size).toBe(0)
    expect(parseUnits(sections, {maxBytes: sections.info.length}).units.length).toBe(1)
  })

  it('one abbreviation read by its code is the table\'s, and a code the table lacks is undefined', () => {
    const table = parseAbbrevTable(sections.abbrev, 0)
    for (const code of [1, table.size, Math.ceil(table.size / 2)]) expect(abbrevByCode(sections.abbrev, 0, code)).toEqual(table.get(code))
    expect(abbrevByCode(sections.abbrev, 0, table.size + 1000)).toBeUndefined()
  })
})
