import {describe, expect, it} from 'vitest'
import {DW_AT, DW_FORM, DW_TAG} from '../../src/elf/dwarf/constants.js'
import type {AttrValue, Die} from '../../src/elf/dwarf/info.js'
import {bitFieldNamed, constValueOf, memberPath, staticConstant} from '../../src/elf/dwarf/struct-paths.js'
import {TypeTable, type StructType} from '../../src/elf/dwarf/types.js'

// Bit-fields in TypeTable's StructType.bitFields, placed from the struct's first bit, as each
// DWARF version says it: DW_AT_data_bit_offset (DWARF 4/5), or DW_AT_bit_offset counted from the
// storage unit's most significant bit (DWARF 2/3). The layouts are google/tcmalloc's Span of
// fce3f55 (first_page_:35 at byte 24, then is_large_span_, sampled_), as gcc writes them.

const num = (value: number): AttrValue => ({form: DW_FORM.data1, value})
const str = (value: string): AttrValue => ({form: DW_FORM.string, value})

/** A struct DIE named Span (64 bytes) with these members, each a uint64 unless it says. */
function span(members: Array<Array<[number, AttrValue]>>): {table: TypeTable; die: Die} {
  const dies = new Map<number, Die>()
  const u64: Die = {offset: 10, tag: DW_TAG.base_type, parent: null, children: [], attrs: new Map([[DW_AT.name, str('long unsigned int')], [DW_AT.byte_size, num(8)]])}
  const s: Die = {offset: 100, tag: DW_TAG.structure_type, parent: null, children: [], attrs: new Map([[DW_AT.name, str('Span')], [DW_AT.byte_size, num(64)]])}
  dies.set(u64.offset, u64)
  dies.set(s.offset, s)
  members.forEach((attrs, i) => {
    const m: Die = {offset: 101 + i, tag: DW_TAG.member, parent: s, children: [], attrs: new Map([[DW_AT.type, {form: DW_FORM.ref4, value: u64.offset}], ...attrs])}
    s.children.push(m)
    dies.set(m.offset, m)
  })
  return {table: new TypeTable(dies), die: s}
}

describe('bit-fields', () => {
  it('DWARF 4/5: DW_AT_data_bit_offset is the place', () => {
    const {table} = span([
      [[DW_AT.name, str('allocated_')], [DW_AT.data_member_location, num(20)]],
      [[DW_AT.name, str('first_page_')], [DW_AT.bit_size, num(35)], [DW_AT.data_bit_offset, num(192)]],
      [[DW_AT.name, str('sampled_')], [DW_AT.bit_size, num(1)], [DW_AT.data_bit_offset, num(228)]],
    ])
    const s = table.structNamed('Span')!
    expect(s.bitFields).toEqual([{name: 'first_page_', bitOffset: 192, bitSize: 35}, {name: 'sampled_', bitOffset: 228, bitSize: 1}])
    expect(memberPath(s, 'allocated_')?.offset).toBe(20)
    // A member path never takes a bit-field for a whole member (DWARF 5's sit in members at offset 0).
    expect(memberPath(s, 'first_page_')).toBeNull()
  })

  it('DWARF 2/3: DW_AT_bit_offset from the storage unit\'s most significant bit, converted to the little-endian place', () => {
    const {table} = span([
      // An 8-byte unit at byte 24: bits 0-34 are 64 − 0 − 35 = 29 bits below its top.
      [[DW_AT.name, str('first_page_')], [DW_AT.byte_size, num(8)], [DW_AT.bit_size, num(35)], [DW_AT.bit_offset, num(29)], [DW_AT.data_member_location, num(24)]],
      // A 1-byte unit at byte 28 (gcc's uint8_t flags): bit 3 of it is 8 − 3 − 1 = 4 below its top.
      [[DW_AT.name, str('sampled_')], [DW_AT.byte_size, num(1)], [DW_AT.bit_size, num(1)], [DW_AT.bit_offset, num(4)], [DW_AT.data_member_location, num(28)]],
    ])
    const s: StructType = table.structNamed('Span')!
    expect(s.bitFields).toEqual([{name: 'first_page_', bitOffset: 192, bitSize: 35}, {name: 'sampled_', bitOffset: 227, bitSize: 1}])
    expect(bitFieldNamed(s, 'sampled_')).toEqual({name: 'sampled_', bitOffset: 227, bitSize: 1})
  })

  it('a bit-field whose place is not given is left out, not guessed', () => {
    const {table} = span([[[DW_AT.name, str('odd_')], [DW_AT.bit_size, num(3)], [DW_AT.bit_offset, num(2)]]])
    expect(table.structNamed('Span')!.bitFields).toEqual([])
  })
})

describe('constants', () => {
  it('a static constant\'s value: a constant form, or a little-endian block (gcc\'s for a class-typed constant)', () => {
    const {die} = span([])
    const constant = (offset: number, name: string, value: AttrValue): Die => ({offset, tag: DW_TAG.variable, parent: die, children: [], attrs: new Map([[DW_AT.name, str(name)], [DW_AT.declaration, num(1)], [DW_AT.const_value, value]])})
    die.children.push(constant(200, 'kCacheSize', num(12)), constant(201, 'kLargeSpanLength', {form: DW_FORM.block1, value: Buffer.from([0x3f, 0, 0, 0, 0, 0, 0, 0])}))
    expect(staticConstant(die, 'kCacheSize')).toBe(12)
    expect(staticConstant(die, 'kLargeSpanLength')).toBe(63)
    expect(staticConstant(die, 'kBitmapSize')).toBeUndefined()
    expect(constValueOf({...die.children[1]!, attrs: new Map([[DW_AT.const_value, {form: DW_FORM.block1, value: Buffer.alloc(16)}]])})).toBeUndefined()
  })
})
