import path from 'node:path'
import {TomaError} from '../../errors.js'
import {DwarfError} from '../../elf/dwarf/cursor.js'
import {readDebugInfo, type DebugInfo} from '../../elf/dwarf/debug-info.js'
import type {LoadedModule} from '../../program/program.js'
import {moduleDwarfFile} from '../../program/module-dwarf-file.js'

/**
 * A library's DWARF past this many bytes of .debug_info is left out: libc6-dbg's libc is 5.8 MB,
 * 2 s and 200 MB of memory to read, for a handful of globals that rarely point into the heap. The
 * executable's DWARF, the program the user built with -g, has a larger budget.
 */
export const LIBRARY_DWARF_BUDGET = 4 << 20
/**
 * The executable's DWARF past this is left out too: reading keeps about 35 bytes of memory per
 * byte of .debug_info (libc's 5.8 MB: 204 MB), so 32 MiB is already a gigabyte.
 */
export const EXECUTABLE_DWARF_BUDGET = 32 << 20

export interface ModuleDebugInfo {
  module: LoadedModule
  info: DebugInfo
  /** The file the DWARF came from: the module file or its separate debug file. */
  from: string
}

/**
 * The DWARF of a module: in its own file (a -g build), else in its separate debug file (found by
 * build-id or .gnu_debuglink, program.ts). Null when it has none. A file whose DWARF is damaged, or
 * a library's over the budget, is a one-line reason instead.
 */
export function moduleDebugInfo(module: LoadedModule, isExecutable: boolean): ModuleDebugInfo | string | null {
  const dwarf = moduleDwarfFile(module)
  if (dwarf === null || typeof dwarf === 'string') return dwarf
  const {file: source, from} = dwarf
  try {
    const budget = isExecutable ? EXECUTABLE_DWARF_BUDGET : LIBRARY_DWARF_BUDGET
    const info = readDebugInfo(source, budget)
    if (info === null) return null
    if (typeof info === 'number') return `${path.basename(module.module.path)}: its ${info} bytes of .debug_info (${from}) are past the ${budget}-byte budget for ${isExecutable ? 'an executable' : 'a library'}'s DWARF: left out`
    return {module, info, from}
  } catch (e) {
    if (e instanceof DwarfError || e instanceof TomaError) return `${from}: DWARF left out: ${e.message}`
    throw e
  }
}
