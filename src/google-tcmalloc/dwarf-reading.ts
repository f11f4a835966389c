import {DwarfError} from '../elf/dwarf/cursor.js'
import {moduleDwarfFile} from '../program/module-dwarf-file.js'
import type {LoadedModule, Program} from '../program/program.js'
import {googleLayoutFromDwarf, type DwarfLayout} from './layout-from-dwarf.js'

/** The layout a build's own DWARF gives, or why it gives none where it has DWARF (a warning to say). */
export interface DwarfReading {
  layout: DwarfLayout | null
  note: string | null
}

const readings = new WeakMap<Program, DwarfReading>()

/**
 * The google/tcmalloc layout that the DWARF of the module holding it describes (its own file, or
 * its separate debug file by build-id or debuglink), read once per program: recognising the
 * allocator and analysing its heap both ask. No DWARF, or DWARF without tcmalloc's types, is no
 * reading and nothing to say; DWARF that lacks a field the model reads, or is damaged, is no
 * reading and a note, and the table's families are tried.
 */
export function dwarfLayoutOf(program: Program, module: LoadedModule): DwarfReading {
  let reading = readings.get(program)
  if (!reading) {
    reading = readDwarfLayout(module)
    readings.set(program, reading)
  }
  return reading
}

function readDwarfLayout(module: LoadedModule): DwarfReading {
  const where = moduleDwarfFile(module)
  if (where === null) return {layout: null, note: null}
  if (typeof where === 'string') return {layout: null, note: `the debug file of ${module.module.path} does not open (${where}): the table's families are tried`}
  try {
    const read = googleLayoutFromDwarf(where.file, where.from)
    if (read === null) return {layout: null, note: null}
    if ('missing' in read) return {layout: null, note: `the DWARF of ${where.from} describes google/tcmalloc but not ${read.missing.join(', ')}: the table's families are tried`}
    return {layout: read, note: null}
  } catch (e) {
    if (e instanceof DwarfError) return {layout: null, note: `the DWARF of ${where.from} is damaged (${e.message}): the table's families are tried`}
    throw e
  }
}
