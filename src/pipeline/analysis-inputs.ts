import path from 'node:path'
import {fileIdentity, type KnownFile, type KnownFiles} from '../elf/file-identity.js'
import type {IndexInputs} from '../index/index-meta.js'
import {absoluteModuleFlags, type ModuleFlagValues} from '../program/open-program.js'
import type {Program} from '../program/program.js'

/**
 * The options of an analysis: where module files are, --tcmalloc-version, and every other option
 * that changes the answer (root kinds, …): all are part of what an index was made from.
 */
export type AnalysisOptions = ModuleFlagValues & {'tcmalloc-version'?: string} & Record<string, string | boolean | number | undefined>

/** The options given (undefined ones dropped), paths absolute: how they are stored and compared. */
export function normalOptions(options: AnalysisOptions): Record<string, string | boolean | number> {
  const abs = absoluteModuleFlags(options)
  return Object.fromEntries(Object.entries(abs).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string | boolean | number>
}

/** Everything an analysis of this program with these options depends on. */
export function analysisInputs(program: Program, options: AnalysisOptions): IndexInputs {
  const core = program.core
  return {
    // A compressed core is known by the compressed file: a changed file is a stale index.
    core: program.compressed
      ? {...identity(program.compressed), compressed: {format: program.compressed.format, uncompressedPath: program.compressed.uncompressedPath}}
      : identity(core),
    modules: program.modules.map(m => ({
      module: m.module.path,
      file: m.file ? path.resolve(m.file.path) : null,
      buildId: m.file?.buildId ?? null,
      identity: m.file ? fileIdentity(m.file.path) : null,
    })),
    // --exe and --tcmalloc as the files they resolved to (a bare name is found among the core's
    // module paths, --sysroot, --solib-search-path), so the index can be reopened from anywhere.
    options: normalOptions({...options, exe: program.flagFiles.exe ?? options.exe, tcmalloc: program.flagFiles.tcmalloc ?? options.tcmalloc}),
  }
}

const identity = (file: {path: string; size: number; mtimeMs: number}) => ({path: path.resolve(file.path), size: file.size, mtimeMs: file.mtimeMs})

/**
 * The module files an index was made from, by path, as Program.load takes them: a query finds the
 * same files again by their identity without reading them.
 */
export function knownModuleFiles(inputs: IndexInputs): KnownFiles {
  const known = new Map<string, KnownFile>()
  for (const m of inputs.modules) if (m.file !== null && m.identity) known.set(m.file, {...m.identity, buildId: m.buildId})
  return known
}
