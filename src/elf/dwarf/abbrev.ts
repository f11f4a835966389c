import {Cursor, DwarfError} from './cursor.js'
import {DW_FORM} from './constants.js'

export interface AbbrevAttr {
  name: number
  form: number
  /** DW_FORM_implicit_const's value, held in the abbreviation. */
  implicit?: number
}

export interface Abbrev {
  tag: number
  hasChildren: boolean
  attrs: AbbrevAttr[]
}

/** No abbreviation table is longer than this (a bound on a damaged one). */
const MAX_ABBREVS = 1 << 20
const MAX_ATTRS = 512

/** The abbreviation table at `offset` of .debug_abbrev: code → abbreviation. */
export function parseAbbrevTable(section: Buffer, offset: number): Map<number, Abbrev> {
  const c = new Cursor(section, offset, section.length, '.debug_abbrev')
  const table = new Map<number, Abbrev>()
  for (let n = 0; n < MAX_ABBREVS; n++) {
    const code = c.uleb()
    if (code === 0) return table
    const tag = c.uleb()
    const hasChildren = c.u8() !== 0
    const attrs: AbbrevAttr[] = []
    for (let k = 0; ; k++) {
      if (k > MAX_ATTRS) throw new DwarfError(`.debug_abbrev: abbreviation ${code} has more than ${MAX_ATTRS} attributes`)
      const name = c.uleb()
      const form = c.uleb()
      if (name === 0 && form === 0) break
      attrs.push(form === DW_FORM.implicit_const ? {name, form, implicit: c.sleb()} : {name, form})
    }
    table.set(code, {tag, hasChildren, attrs})
  }
  throw new DwarfError(`.debug_abbrev: table at ${offset} has more than ${MAX_ABBREVS} entries`)
}
