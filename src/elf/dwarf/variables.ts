import {DW_AT, DW_FORM, DW_OP, DW_TAG} from './constants.js'
import {Cursor} from './cursor.js'
import {addrx, type Die, type Unit} from './info.js'
import type {DwarfSections} from './sections.js'
import {attrNumber, attrString, type DwarfType, type TypeTable} from './types.js'

/** A variable at a fixed link-time address (file scope, or a function's `static`). */
export interface GlobalVariable {
  name: string
  address: number
  type: DwarfType
}

/** A local or parameter at a fixed offset from its function's CFA, live over [low, high). */
export interface FrameVariable {
  name: string
  cfaOffset: number
  low: number
  high: number
  type: DwarfType
}

/** A function's code range [low, high) (link-time) and its variables that live in its frame. */
export interface FunctionFrame {
  name: string
  low: number
  high: number
  variables: FrameVariable[]
}

export interface Variables {
  globals: GlobalVariable[]
  functions: FunctionFrame[]
  /** Locations this reader does not follow: location lists, registers, frame bases other than the CFA. */
  skipped: {locationLists: number; expressions: number; frameBases: number; rangedBlocks: number; untyped: number}
}

/** No function holds more lexical blocks in a chain than this. */
const MAX_NESTING = 256

/**
 * The variables with a location the reader can prove from the DWARF alone: a global's
 * `DW_OP_addr` (or `DW_OP_addrx`), and a local's `DW_OP_fbreg n` in a function whose frame base is
 * `DW_OP_call_frame_cfa` (what gcc emits on x86-64), live over the function's or its lexical
 * block's [low_pc, high_pc). Location lists, register locations and blocks with DW_AT_ranges are
 * counted in `skipped`, not followed.
 */
export function collectVariables(units: Unit[], sections: DwarfSections, types: TypeTable): Variables {
  const out: Variables = {globals: [], functions: [], skipped: {locationLists: 0, expressions: 0, frameBases: 0, rangedBlocks: 0, untyped: 0}}
  for (const unit of units) {
    const stack: Array<{die: Die; fn: FunctionFrame | null; low: number; high: number; depth: number}> = [{die: unit.root, fn: null, low: 0, high: 0, depth: 0}]
    while (stack.length > 0) {
      const {die, fn, low, high, depth} = stack.pop()!
      for (const child of die.children) {
        if (child.tag === DW_TAG.variable || child.tag === DW_TAG.formal_parameter) {
          variable(child, unit, sections, types, fn, low, high, out)
        } else if (child.tag === DW_TAG.subprogram && depth < MAX_NESTING) {
          const range = pcRange(child)
          if (!range) {
            // A declaration (a class's member function) or an abstract instance: its statics only.
            stack.push({die: child, fn: null, low: 0, high: 0, depth: depth + 1})
            continue
          }
          const base = child.attrs.get(DW_AT.frame_base)?.value
          const cfaBased = Buffer.isBuffer(base) && base.length === 1 && base[0] === DW_OP.call_frame_cfa
          if (!cfaBased) out.skipped.frameBases++
          const f: FunctionFrame = {name: attrString(child, DW_AT.name) ?? '?', low: range.low, high: range.high, variables: []}
          if (cfaBased) out.functions.push(f)
          stack.push({die: child, fn: cfaBased ? f : null, low: range.low, high: range.high, depth: depth + 1})
        } else if (child.tag === DW_TAG.lexical_block && depth < MAX_NESTING) {
          const range = pcRange(child)
          if (!range && fn) {
            if (child.attrs.has(DW_AT.ranges)) out.skipped.rangedBlocks++
            // Its locals' lifetimes are not a single range: left out (its statics still count).
            stack.push({die: child, fn: null, low: 0, high: 0, depth: depth + 1})
            continue
          }
          stack.push({die: child, fn, low: range?.low ?? low, high: range?.high ?? high, depth: depth + 1})
        } else if ((child.tag === DW_TAG.namespace || child.tag === DW_TAG.structure_type || child.tag === DW_TAG.class_type) && depth < MAX_NESTING) {
          stack.push({die: child, fn: null, low: 0, high: 0, depth: depth + 1})
        }
      }
    }
  }
  return out
}

function variable(die: Die, unit: Unit, sections: DwarfSections, types: TypeTable, fn: FunctionFrame | null, low: number, high: number, out: Variables): void {
  const loc = die.attrs.get(DW_AT.location)
  if (!loc) return
  if (loc.form !== DW_FORM.exprloc && !Buffer.isBuffer(loc.value)) {
    out.skipped.locationLists++
    return
  }
  const expr = loc.value as Buffer
  const type = types.typeAttr(die)
  const name = attrString(die, DW_AT.name) ?? '?'
  if (expr.length === 9 && expr[0] === DW_OP.addr && unit.addressSize === 8) {
    if (!type) out.skipped.untyped++
    else out.globals.push({name, address: Number(expr.readBigUInt64LE(1)), type})
    return
  }
  if (expr.length >= 2 && (expr[0] === DW_OP.addrx || expr[0] === DW_OP.GNU_addr_index)) {
    const c = new Cursor(expr, 1, expr.length, 'DW_OP_addrx')
    const index = c.uleb()
    if (c.atEnd) {
      if (!type) out.skipped.untyped++
      else out.globals.push({name, address: addrx(index, {s: sections, addrBase: unit.addrBase, addressSize: unit.addressSize}), type})
      return
    }
  }
  if (fn && expr.length >= 2 && expr[0] === DW_OP.fbreg) {
    const c = new Cursor(expr, 1, expr.length, 'DW_OP_fbreg')
    const offset = c.sleb()
    if (c.atEnd) {
      if (!type) out.skipped.untyped++
      else fn.variables.push({name, cfaOffset: offset, low, high, type})
      return
    }
  }
  out.skipped.expressions++
}

/** [low_pc, high_pc) of a function or block (high_pc an address, or DWARF 4+'s length from low_pc). */
function pcRange(die: Die): {low: number; high: number} | null {
  const low = attrNumber(die, DW_AT.low_pc)
  const h = die.attrs.get(DW_AT.high_pc)
  if (low === undefined || !h || typeof h.value !== 'number') return null
  const high = h.form === DW_FORM.addr ? h.value : low + h.value
  return high > low ? {low, high} : null
}
