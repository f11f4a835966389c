import path from 'node:path'
import {Core} from '../core/core.js'
import type {KnownFiles} from '../elf/file-identity.js'
import {TomaError} from '../errors.js'
import {discardCopy, uncompressedCore, type CompressedCore} from '../input/uncompressed-core.js'
import {Program} from './program.js'

/** The options that say where a core's module files are, as the command-line flags spell them. */
export interface ModuleFlagValues {
  exe?: string
  tcmalloc?: string
  sysroot?: string
  'solib-search-path'?: string
  'debug-file-directory'?: string
}

/**
 * Opens a core and its module files as the module flags say. A compressed core (zstd, xz, lz4,
 * gzip) is opened through its decompressed copy, made once in the cache folder. `knownFiles`: the
 * module files an index was made from, found again by identity without reading them.
 */
export function openProgram(corePath: string, flags: ModuleFlagValues, knownFiles?: KnownFiles): Program {
  const compressed = uncompressedCore(corePath)
  const core = compressed ? openDecompressed(corePath, compressed) : Core.open(corePath)
  return Program.load(core, {
    compressed,
    exe: flags.exe,
    tcmalloc: flags.tcmalloc,
    sysroot: flags.sysroot,
    solibSearchPath: flags['solib-search-path']?.split(':').filter(Boolean),
    debugDirectories: flags['debug-file-directory']?.split(':').filter(Boolean),
    knownFiles,
  })
}

/** The module flags with every path made absolute, so that they mean the same from another folder. */
export function absoluteModuleFlags<T extends ModuleFlagValues>(flags: T): T {
  const abs = (p: string | undefined) => (p ? path.resolve(p) : p)
  return {
    ...flags,
    exe: abs(flags.exe),
    tcmalloc: abs(flags.tcmalloc),
    sysroot: abs(flags.sysroot),
    'solib-search-path': absoluteList(flags['solib-search-path']),
    'debug-file-directory': absoluteList(flags['debug-file-directory']),
  }
}

/** A colon-separated folder list with each folder made absolute. */
function absoluteList(list: string | undefined): string | undefined {
  return list?.split(':').filter(Boolean).map(d => path.resolve(d)).join(':')
}

/**
 * A decompressed copy's errors name the file the user gave ("core.zst (decompressed): not an ELF
 * file"); a copy that is no core toma can open goes (it would only fail again, and take space).
 */
function openDecompressed(given: string, copy: CompressedCore): Core {
  try {
    return Core.open(copy.uncompressedPath)
  } catch (e) {
    discardCopy(copy)
    if (e instanceof TomaError) throw new TomaError(e.message.replaceAll(copy.uncompressedPath, `${given} (decompressed)`), e.exitCode)
    throw e
  }
}
