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
  const table = new Map<number, Abbrev>()
  walkAbbrevTable(section, offset, (code, abbrev) => {
    table.set(code, abbrev)
    return false
  })
  return table
}

/**
 * The one abbreviation of that code in the table at `offset`, the entries before it stepped over
 * without being kept: what a reader needs to decode a unit's own DIE, and to skip the unit when it
 * is not wanted, without building the table of every unit of a large program.
 */
export function abbrevByCode(section: Buffer, offset: number, wanted: number): Abbrev | undefined {
  let found: Abbrev | undefined
  walkAbbrevTable(section, offset, (code, abbrev) => {
    if (code === wanted) found = abbrev
    return found !== undefined
  }, code => code === wanted)
  return found
}

/**
 * Reads the table's entries in order, handing each to `take` (which returns true to end the walk)
 * until the table's end. An entry that `keep` (when given) refuses has its attributes read past,
 * not built. Damage is a DwarfError.
 */
function walkAbbrevTable(section: Buffer, offset: number, take: (code: number, abbrev: Abbrev) => boolean, keep?: (code: number) => boolean): void {
  const c = new Cursor(section, offset, section.length, '.debug_abbrev')
  for (let n = 0; n < MAX_ABBREVS; n++) {
    const code = c.uleb()
    if (code === 0) return
    const abbrev: Abbrev = {tag: c.uleb(), hasChildren: c.u8() !== 0, attrs: []}
    const kept = keep ? keep(code) : true
    for (let k = 0; ; k++) {
      if (k > MAX_ATTRS) throw new DwarfError(`.debug_abbrev: abbreviation ${code} has more than ${MAX_ATTRS} attributes`)
      const name = c.uleb()
      const form = c.uleb()
      if (name === 0 && form === 0) break
      const implicit = form === DW_FORM.implicit_const ? c.sleb() : undefined
      if (kept) abbrev.attrs.push(implicit !== undefined ? {name, form, implicit} : {name, form})
    }
    if (kept && take(code, abbrev)) return
  }
  throw new DwarfError(`.debug_abbrev: table at ${offset} has more than ${MAX_ABBREVS} entries`)
}
