import {Cursor, DwarfError, stringAt} from './cursor.js'
import {DW_AT, DW_FORM, DW_UT} from './constants.js'
import {abbrevByCode, parseAbbrevTable, type Abbrev} from './abbrev.js'
import type {DwarfSections} from './sections.js'
import {u64le} from '../../util/u64le.js'

/**
 * An attribute's value: a number (constants, addresses, absolute .debug_info offsets for
 * references), a string, or the bytes of a block or expression. `form` tells which class it is
 * (DW_AT_high_pc is an address or an offset from low_pc; DW_AT_location an expression or a
 * location list offset).
 */
export interface AttrValue {
  form: number
  value: number | string | Buffer
}

/** Shared by every DIE without children (most of them) until one is added: an array each was a fifth of the memory. */
const NO_CHILDREN: Die[] = []

/** A debugging information entry, with the attributes the reader keeps. */
export interface Die {
  /** Its offset in .debug_info: what references name. */
  offset: number
  tag: number
  parent: Die | null
  children: Die[]
  attrs: Map<number, AttrValue>
}

export interface Unit {
  offset: number
  version: number
  addressSize: number
  /** Where this unit's .debug_addr entries start (DW_OP_addrx). */
  addrBase: number
  /** Where its .debug_rnglists offsets table starts (DW_FORM_rnglistx). */
  rnglistsBase: number
  /** Its DW_AT_low_pc: the base of its range lists. */
  lowPc: number
  root: Die
}

/**
 * The attributes naming and the layout readers need; the others are skipped without being decoded
 * (a unit's strings are most of the reading time: linkage names, file names, producers). The bit
 * attributes place bit-fields; const_value gives constants (kPageShift, template arguments).
 */
const KEPT = new Set<number>([
  DW_AT.location, DW_AT.name, DW_AT.byte_size, DW_AT.low_pc, DW_AT.high_pc, DW_AT.upper_bound,
  DW_AT.abstract_origin, DW_AT.count, DW_AT.data_member_location, DW_AT.declaration,
  DW_AT.specification, DW_AT.type, DW_AT.frame_base, DW_AT.ranges, DW_AT.str_offsets_base, DW_AT.addr_base,
  DW_AT.rnglists_base, DW_AT.bit_size, DW_AT.bit_offset, DW_AT.data_bit_offset, DW_AT.const_value,
])

/**
 * Which compile units to parse, for a reader that needs a few units of a file whose DWARF may be
 * gigabytes (Envoy, MongoDB): each unit's own DIE is decoded for its name, and a unit not wanted
 * is skipped by its header's length, its entries never decoded.
 */
export interface UnitSelection {
  /** Whether the unit whose DW_AT_name this is gets parsed (a unit without a name is not). */
  named?: (name: string) => boolean
  /** Bytes of the wanted units parsed at most: the first unit past this ends the reading, `exhausted` says so. */
  maxBytes?: number
}

/** What parseUnits read: the units parsed, their DIEs by offset, and why it stopped short if it did. */
export interface ParsedUnits {
  units: Unit[]
  dies: Map<number, Die>
  /** Units left unparsed: not selected by name. */
  skipped: number
  /** Bytes of the parsed units. */
  parsedBytes: number
  /** The selection's byte budget ended the reading before the section's end. */
  exhausted: boolean
}

/** Bounds on damaged input. */
const MAX_UNITS = 1 << 20
const MAX_DIES = 1 << 24
const MAX_DEPTH = 512

/**
 * Parses every compile (and partial) unit of .debug_info, DWARF 2 to 5, into DIE trees. Type units
 * and split units are skipped. References are made absolute; strings and indexed addresses
 * (DWARF 5 strx/addrx) are resolved. References into another file (dwz's DW_FORM_GNU_ref_alt) and
 * by type signature are dropped: what they name is unknown here. Any damage is a DwarfError.
 * `select` limits the reading to the units wanted (every unit's header is still walked).
 */
export function parseUnits(s: DwarfSections, select: UnitSelection = {}): ParsedUnits {
  const units: Unit[] = []
  let skipped = 0
  let parsedBytes = 0
  let exhausted = false
  const maxBytes = select.maxBytes ?? Infinity
  const dies = new Map<number, Die>()
  const abbrevTables = new Map<number, Map<number, Abbrev>>()
  const c = new Cursor(s.info, 0, s.info.length, '.debug_info')
  while (!c.atEnd) {
    if (units.length >= MAX_UNITS) throw new DwarfError(`.debug_info: more than ${MAX_UNITS} units`)
    const start = c.pos
    let length = c.u32()
    let offsetSize = 4
    if (length === 0xffffffff) {
      length = c.u64()
      offsetSize = 8
    } else if (length >= 0xfffffff0) throw new DwarfError(`.debug_info: reserved unit length 0x${length.toString(16)} at ${start}`)
    const end = c.pos + length
    if (end > s.info.length) throw new DwarfError(`.debug_info: unit at ${start} runs past the section`)
    const u = new Cursor(s.info, c.pos, end, '.debug_info')
    c.pos = end
    const version = u.u16()
    if (version < 2 || version > 5) throw new DwarfError(`.debug_info: unit at ${start} has version ${version}`)
    let unitType: number = DW_UT.compile
    let addressSize: number
    let abbrevOffset: number
    if (version >= 5) {
      unitType = u.u8()
      addressSize = u.u8()
      abbrevOffset = u.sized(offsetSize)
      if (unitType === DW_UT.skeleton || unitType === DW_UT.split_compile) u.u64()
      if (unitType === DW_UT.type || unitType === DW_UT.split_type) continue
    } else {
      abbrevOffset = u.sized(offsetSize)
      addressSize = u.u8()
    }
    if (unitType !== DW_UT.compile && unitType !== DW_UT.partial) continue
    if (addressSize !== 8 && addressSize !== 4) throw new DwarfError(`.debug_info: unit at ${start} has address size ${addressSize}`)
    const tableOf = (offset: number): Map<number, Abbrev> => {
      let table = abbrevTables.get(offset)
      if (!table) abbrevTables.set(offset, (table = parseAbbrevTable(s.abbrev, offset)))
      return table
    }
    const ctx: UnitContext = {s, start, version, addressSize, offsetSize, strOffsetsBase: version >= 5 ? 8 : 0, addrBase: 8}
    let overBudget = false
    const selective = select.named !== undefined || select.maxBytes !== undefined
    // A selective reading decodes a unit's own DIE with its one abbreviation, and builds the unit's
    // table only when the unit is wanted.
    const admit = selective ? (unit: Die): Map<number, Abbrev> | null => {
      const name = unit.attrs.get(DW_AT.name)?.value
      if (select.named && !(typeof name === 'string' && select.named(name))) return null
      overBudget = parsedBytes + (end - start) > maxBytes
      return overBudget ? null : tableOf(abbrevOffset)
    } : null
    const root = parseDies(u, selective ? unitAbbrev(s, u, abbrevOffset, abbrevTables) : tableOf(abbrevOffset), ctx, dies, admit)
    if (root === UNWANTED) {
      if (overBudget) {
        exhausted = true
        break
      }
      skipped++
      continue
    }
    parsedBytes += end - start
    if (root) {
      const low = root.attrs.get(DW_AT.low_pc)?.value
      const rb = root.attrs.get(DW_AT.rnglists_base)?.value
      units.push({offset: start, version, addressSize, addrBase: ctx.addrBase, rnglistsBase: typeof rb === 'number' ? rb : 0, lowPc: typeof low === 'number' ? low : 0, root})
    }
  }
  return {units, dies, skipped, parsedBytes, exhausted}
}

interface UnitContext {
  s: DwarfSections
  start: number
  version: number
  addressSize: number
  offsetSize: number
  strOffsetsBase: number
  addrBase: number
}

/**
 * Entries naming never looks at, skipped with their children without being kept: enumerators,
 * call sites, inlined calls (their variables' locations are not followed), labels, imports.
 */
const SKIPPED = new Set<number>([0x28, 0x48, 0x49, 0x4109, 0x410a, 0x1d, 0x0a, 0x18, 0x08, 0x3a])

/** What parseDies returns for a unit its `admit` turned away after reading the unit's own DIE. */
const UNWANTED = Symbol('unwanted unit')

/**
 * The abbreviations a unit's own DIE needs: its table when built already, else only the
 * abbreviation of the unit DIE's code (read at the cursor, which does not move).
 */
function unitAbbrev(s: DwarfSections, u: Cursor, abbrevOffset: number, built: Map<number, Map<number, Abbrev>>): Map<number, Abbrev> {
  const table = built.get(abbrevOffset)
  if (table) return table
  const code = new Cursor(u.buf, u.pos, u.end, '.debug_info').uleb()
  const abbrev = abbrevByCode(s.abbrev, abbrevOffset, code)
  return abbrev ? new Map([[code, abbrev]]) : new Map()
}

/**
 * A unit's DIE tree (null for an empty unit), or UNWANTED when `admit` refuses its unit DIE.
 * `admit`, when given, returns the abbreviations of the rest of the unit (`abbrevs` may hold the
 * unit DIE's alone).
 */
function parseDies(u: Cursor, abbrevs: Map<number, Abbrev>, ctx: UnitContext, dies: Map<number, Die>, admit: ((unit: Die) => Map<number, Abbrev> | null) | null): Die | null | typeof UNWANTED {
  let root: Die | null = null
  // Open entries; null for one skipped (so are its children).
  const stack: Array<Die | null> = []
  while (!u.atEnd) {
    const offset = u.pos
    const code = u.uleb()
    if (code === 0) {
      if (stack.length === 0) break
      stack.pop()
      if (stack.length === 0) break
      continue
    }
    const abbrev = abbrevs.get(code)
    if (!abbrev) throw new DwarfError(`.debug_info: DIE at ${offset} uses abbreviation ${code}, which its table lacks`)
    const parent = stack.length > 0 ? stack[stack.length - 1]! : null
    const skipped = root !== null && (parent === null || SKIPPED.has(abbrev.tag))
    if (skipped) {
      for (const a of abbrev.attrs) readAttr(u, a.form, a.implicit, ctx, null, a.name, false)
      if (abbrev.hasChildren) {
        if (stack.length >= MAX_DEPTH) throw new DwarfError(`.debug_info: DIEs nested deeper than ${MAX_DEPTH} at ${offset}`)
        stack.push(null)
      }
      continue
    }
    if (dies.size >= MAX_DIES) throw new DwarfError(`.debug_info: more than ${MAX_DIES} DIEs`)
    const die: Die = {offset, tag: abbrev.tag, parent, children: NO_CHILDREN, attrs: new Map()}
    const pendingStrx: Array<[number, number]> | null = root === null ? [] : null
    for (const a of abbrev.attrs) {
      const keep = KEPT.has(a.name)
      const v = readAttr(u, a.form, a.implicit, ctx, pendingStrx, a.name, keep)
      if (v !== undefined && keep) die.attrs.set(a.name, v)
    }
    if (root === null) {
      // The unit DIE holds the bases its own (and every later) strx/addrx resolve against.
      const so = die.attrs.get(DW_AT.str_offsets_base)
      if (so && typeof so.value === 'number') ctx.strOffsetsBase = so.value
      const ab = die.attrs.get(DW_AT.addr_base)
      if (ab && typeof ab.value === 'number') ctx.addrBase = ab.value
      for (const [name, index] of pendingStrx!) die.attrs.set(name, {form: DW_FORM.strp, value: strx(index, ctx)})
      if (admit) {
        const table = admit(die)
        if (!table) return UNWANTED
        abbrevs = table
      }
      root = die
    } else if (parent) {
      if (parent.children === NO_CHILDREN) parent.children = []
      parent.children.push(die)
    }
    dies.set(offset, die)
    if (abbrev.hasChildren) {
      if (stack.length >= MAX_DEPTH) throw new DwarfError(`.debug_info: DIEs nested deeper than ${MAX_DEPTH} at ${offset}`)
      stack.push(die)
    } else if (stack.length === 0) break
  }
  return root
}

function readAttr(u: Cursor, form: number, implicit: number | undefined, ctx: UnitContext, pendingStrx: Array<[number, number]> | null, name: number, keep: boolean): AttrValue | undefined {
  const F = DW_FORM
  // The raw value is read (the cursor moves on) whether or not it is kept.
  switch (form) {
    case F.addr: return {form, value: u.sized(ctx.addressSize)}
    case F.data1: case F.ref1: case F.flag: case F.strx1: case F.addrx1: return kept(keep, form, ctx, pendingStrx, name, u.u8())
    case F.data2: case F.ref2: case F.strx2: case F.addrx2: return kept(keep, form, ctx, pendingStrx, name, u.u16())
    case F.strx3: case F.addrx3: return kept(keep, form, ctx, pendingStrx, name, u.u16() + u.u8() * 0x10000)
    case F.data4: case F.ref4: case F.strx4: case F.addrx4: case F.ref_sup4: return kept(keep, form, ctx, pendingStrx, name, u.u32())
    case F.data8: case F.ref8: case F.ref_sig8: case F.ref_sup8: {
      const at = u.pos
      u.bytes(8)
      // Constants and references past 2^53 do not occur; keep what fits.
      const v = u.buf.readBigUInt64LE(at)
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? kept(keep, form, ctx, pendingStrx, name, Number(v)) : undefined
    }
    case F.data16: u.bytes(16); return undefined
    case F.sdata: return {form, value: u.sleb()}
    case F.udata: case F.ref_udata: case F.strx: case F.addrx: case F.GNU_addr_index: case F.GNU_str_index:
      return kept(keep, form, ctx, pendingStrx, name, u.uleb())
    case F.string: if (!keep) { u.skipCString(); return undefined }
      return {form, value: u.cstring('utf8')}
    case F.strp: case F.line_strp: case F.sec_offset: case F.ref_addr: case F.strp_sup: case F.GNU_ref_alt: case F.GNU_strp_alt:
      return kept(keep, form, ctx, pendingStrx, name, u.sized(form === F.ref_addr && ctx.version === 2 ? ctx.addressSize : ctx.offsetSize))
    case F.block1: return {form, value: u.bytes(u.u8())}
    case F.block2: return {form, value: u.bytes(u.u16())}
    case F.block4: return {form, value: u.bytes(u.u32())}
    case F.block: case F.exprloc: return {form, value: u.bytes(u.uleb())}
    case F.flag_present: return {form, value: 1}
    case F.implicit_const: return {form, value: implicit ?? 0}
    case F.loclistx: case F.rnglistx: return {form, value: u.uleb()}
    case F.indirect: {
      const actual = u.uleb()
      if (actual === F.indirect || actual === F.implicit_const) throw new DwarfError(`.debug_info: DW_FORM_indirect names form ${actual}`)
      return readAttr(u, actual, implicit, ctx, pendingStrx, name, keep)
    }
    default:
      throw new DwarfError(`.debug_info: unknown attribute form 0x${form.toString(16)} at ${u.pos}`)
  }
}

/** `resolve` when the attribute is kept (a plain function, not a closure per attribute: this is the hot path). */
function kept(keep: boolean, form: number, ctx: UnitContext, pendingStrx: Array<[number, number]> | null, name: number, raw: number): AttrValue | undefined {
  return keep ? resolve(form, raw, ctx, pendingStrx, name) : undefined
}

/** Turns a raw value into the reader's: references absolute, strings and indexed addresses looked up. */
function resolve(form: number, raw: number, ctx: UnitContext, pendingStrx: Array<[number, number]> | null, name: number): AttrValue | undefined {
  const F = DW_FORM
  switch (form) {
    case F.ref1: case F.ref2: case F.ref4: case F.ref8: case F.ref_udata: return {form: F.ref4, value: ctx.start + raw}
    case F.ref_addr: return {form: F.ref4, value: raw}
    // Another file's DIEs or strings (dwz, a supplementary file) or a type unit: unknown here.
    case F.ref_sig8: case F.ref_sup4: case F.ref_sup8: case F.GNU_ref_alt: case F.GNU_strp_alt: case F.strp_sup: return undefined
    case F.strp: return {form, value: stringAt(ctx.s.str, raw, '.debug_str')}
    case F.line_strp: return {form, value: stringAt(ctx.s.lineStr, raw, '.debug_line_str')}
    case F.strx: case F.strx1: case F.strx2: case F.strx3: case F.strx4: case F.GNU_str_index:
      if (pendingStrx) {
        pendingStrx.push([name, raw])
        return undefined
      }
      return {form: F.strp, value: strx(raw, ctx)}
    case F.addrx: case F.addrx1: case F.addrx2: case F.addrx3: case F.addrx4: case F.GNU_addr_index:
      return {form: F.addr, value: addrx(raw, ctx)}
    default: return {form, value: raw}
  }
}

function strx(index: number, ctx: UnitContext): string {
  const at = ctx.strOffsetsBase + index * ctx.offsetSize
  if (at + ctx.offsetSize > ctx.s.strOffsets.length) throw new DwarfError(`.debug_str_offsets: index ${index} is past the section`)
  const off = ctx.offsetSize === 8 ? u64le(ctx.s.strOffsets, at) : ctx.s.strOffsets.readUInt32LE(at)
  return stringAt(ctx.s.str, off, '.debug_str')
}

/** An address from .debug_addr (DWARF 5 DW_FORM_addrx, DW_OP_addrx). */
export function addrx(index: number, ctx: {s: DwarfSections; addrBase: number; addressSize: number}): number {
  const at = ctx.addrBase + index * ctx.addressSize
  if (at + ctx.addressSize > ctx.s.addr.length) throw new DwarfError(`.debug_addr: index ${index} is past the section`)
  return ctx.addressSize === 8 ? u64le(ctx.s.addr, at) : ctx.s.addr.readUInt32LE(at)
}
