import {Core} from '../core/core.js'
import {Program} from '../program/program.js'

export interface ModuleFlagValues {
  exe?: string
  tcmalloc?: string
  sysroot?: string
  'solib-search-path'?: string
  'debug-file-directory'?: string
}

/** Opens a core and its module files as the module flags say. */
export function openProgram(corePath: string, flags: ModuleFlagValues): Program {
  const core = Core.open(corePath)
  return Program.load(core, {
    exe: flags.exe,
    tcmalloc: flags.tcmalloc,
    sysroot: flags.sysroot,
    solibSearchPath: flags['solib-search-path']?.split(':').filter(Boolean),
    debugDirectories: flags['debug-file-directory']?.split(':').filter(Boolean),
  })
}
