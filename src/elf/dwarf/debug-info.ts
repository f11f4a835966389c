import type {ElfFile} from '../elf-file.js'
import {parseUnits} from './info.js'
import {debugInfoSize, dwarfSections} from './sections.js'
import {TypeTable} from './types.js'
import {collectVariables, type Variables} from './variables.js'

/** What naming needs from one file's DWARF: its types and its variables with fixed locations. */
export interface DebugInfo {
  types: TypeTable
  variables: Variables
  /** Bytes of .debug_info read (after inflating). */
  infoBytes: number
  units: number
}

/**
 * Reads a module file's DWARF (.debug_info and the sections it refers to). Null when the file has
 * none. A file whose DWARF does not parse throws a DwarfError (from ./cursor.js): its caller
 * leaves that file's types out and says so once. A .debug_info longer than `maxInfoBytes` is not
 * inflated nor parsed: its length is returned instead.
 */
export function readDebugInfo(file: ElfFile, maxInfoBytes = Infinity): DebugInfo | number | null {
  const declared = debugInfoSize(file)
  if (declared > maxInfoBytes) return declared
  const sections = dwarfSections(file)
  if (!sections) return null
  if (sections.info.length > maxInfoBytes) return sections.info.length
  const {units, dies} = parseUnits(sections)
  const types = new TypeTable(dies)
  const variables = collectVariables(units, sections, types)
  return {types, variables, infoBytes: sections.info.length, units: units.length}
}
