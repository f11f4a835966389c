import {TomaError} from '../errors.js'
import {ElfFile} from '../elf/elf-file.js'
import type {LoadedModule} from './program.js'

/** The file holding a module's DWARF, and its path (for messages: which file a reading came from). */
export interface DwarfFile {
  file: ElfFile
  from: string
}

/**
 * Where a module's DWARF is: in its own file (a -g build), else in its separate debug file (found
 * by build-id or .gnu_debuglink, program.ts). Null when it has none; a debug file that does not
 * open is a one-line reason instead. Shared by every reader of a module's DWARF, so that they
 * agree on which file that is.
 */
export function moduleDwarfFile(module: LoadedModule): DwarfFile | string | null {
  const file = module.file
  if (!file) return null
  if (file.section('.debug_info') || file.section('.zdebug_info')) return {file, from: file.path}
  const debug = module.debug
  if (!debug) return null
  try {
    return {file: ElfFile.load(debug.path), from: debug.path}
  } catch (e) {
    if (e instanceof TomaError) return `${debug.path}: ${e.message}`
    throw e
  }
}
