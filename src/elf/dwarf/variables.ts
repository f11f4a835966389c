import {DW_AT, DW_FORM, DW_OP, DW_TAG} from './constants.js'
import {Cursor} from './cursor.js'
import {addrx, type Die, type Unit} from './info.js'
import {pcRanges, type PcRange} from './ranges.js'
import type {DwarfSections} from './sections.js'
import {attrString, type DwarfType, type TypeTable} from './types.js'
import {u64le} from '../../util/u64le.js'

/** A variable at a fixed link-time address (file scope, or a function's `static`). */
export interface GlobalVariable {
  name: string
  address: number
  type: DwarfType
}

/** A local or parameter at a fixed offset from its function's CFA, in scope over `scope`. */
export interface FrameVariable {
  name: string
  cfaOffset: number
  /** The code ranges of its function or innermost lexical block. */
  scope: PcRange[]
  type: DwarfType
}

/** A function's code ranges (link-time; several for one split into hot and cold parts) and its variables that live in its frame. */
export interface FunctionFrame {
  name: string
  ranges: PcRange[]
  variables: FrameVariable[]
}

export interface Variables {
  globals: GlobalVariable[]
  functions: FunctionFrame[]
  /** Locations this reader does not follow: location lists, registers and other expressions, frame bases other than the CFA. */
  skipped: {locationLists: number; expressions: number; frameBases: number; untyped: number}
}

/** No function holds more lexical blocks in a chain than this. */
const MAX_NESTING = 256

/**
 * The variables with a location the reader can prove from the DWARF alone: a global's
 * `DW_OP_addr` (or `DW_OP_addrx`), and a local's `DW_OP_fbreg n` in a function whose frame base is
 * `DW_OP_call_frame_cfa` (what gcc emits on x86-64), in scope over its function's or lexical
 * block's code ranges (low_pc/high_pc or DW_AT_ranges). Location lists and register locations
 * are counted in `skipped`, not followed.
 */
export function collectVariables(units: Unit[], sections: DwarfSections, types: TypeTable): Variables {
  const out: Variables = {globals: [], functions: [], skipped: {locationLists: 0, expressions: 0, frameBases: 0, untyped: 0}}
  for (const unit of units) {
    const stack: Array<{die: Die; fn: FunctionFrame | null; scope: PcRange[]; depth: number}> = [{die: unit.root, fn: null, scope: [], depth: 0}]
    while (stack.length > 0) {
      const {die, fn, scope, depth} = stack.pop()!
      for (const child of die.children) {
        if (child.tag === DW_TAG.variable || child.tag === DW_TAG.formal_parameter) {
          variable(child, unit, sections, types, fn, scope, out)
        } else if (child.tag === DW_TAG.subprogram && depth < MAX_NESTING) {
          const ranges = pcRanges(child, unit, sections)
          if (!ranges) {
            // A declaration (a class's member function) or an abstract instance: its statics only.
            stack.push({die: child, fn: null, scope: [], depth: depth + 1})
            continue
          }
          const base = child.attrs.get(DW_AT.frame_base)?.value
          const cfaBased = Buffer.isBuffer(base) && base.length === 1 && base[0] === DW_OP.call_frame_cfa
          if (!cfaBased) out.skipped.frameBases++
          const f: FunctionFrame = {name: attrString(child, DW_AT.name) ?? '?', ranges, variables: []}
          if (cfaBased && ranges.length > 0) out.functions.push(f)
          stack.push({die: child, fn: cfaBased ? f : null, scope: ranges, depth: depth + 1})
        } else if (child.tag === DW_TAG.lexical_block && depth < MAX_NESTING) {
          stack.push({die: child, fn, scope: pcRanges(child, unit, sections) ?? scope, depth: depth + 1})
        } else if ((child.tag === DW_TAG.namespace || child.tag === DW_TAG.structure_type || child.tag === DW_TAG.class_type) && depth < MAX_NESTING) {
          stack.push({die: child, fn: null, scope: [], depth: depth + 1})
        }
      }
    }
  }
  return out
}

function variable(die: Die, unit: Unit, sections: DwarfSections, types: TypeTable, fn: FunctionFrame | null, scope: PcRange[], out: Variables): void {
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
    else out.globals.push({name, address: u64le(expr, 1), type})
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
      else fn.variables.push({name, cfaOffset: offset, scope, type})
      return
    }
  }
  out.skipped.expressions++
}
