import {existsSync} from 'node:fs'
import path from 'node:path'
import {TomaError} from '../errors.js'
import {ElfFile} from './elf-file.js'

export interface ModuleFileQuery {
  /** The module's path as the core's NT_FILE note gives it (a " (deleted)" suffix is ignored). */
  corePath: string
  /** The build-id read from the core for this module, if any. */
  buildId: string | null
  /** An extra name to look up in `explicit`, such as 'exe' or 'tcmalloc' (optional). */
  role?: string
}

export interface ModuleSearchOptions {
  sysroot?: string
  solibSearchPath?: string[]
  /** basename, exact core path or role -> file path given by the user */
  explicit?: Map<string, string>
  /** How an explicit file is opened (default ElfFile.load): Program.load reuses the ones it opened to check them. */
  openExplicit?: (path: string) => ElfFile
  /** How a searched file is opened (default ElfFile.load): Program.load takes known files' build-ids from the index. */
  open?: (path: string) => ElfFile
}

export type ModuleFileResult =
  | {file: ElfFile; how: 'explicit' | 'sysroot' | 'solib-search-path' | 'path'; path: string; verified: boolean}
  | {file: null; tried: string[]; reason: string}

export type BuildIdCheck = 'match' | 'mismatch' | 'unverifiable'

/** Compares a file's build-id with the one the core recorded; unverifiable when either is missing. */
export function checkBuildId(file: ElfFile, coreBuildId: string | null): BuildIdCheck {
  if (!coreBuildId || !file.buildId) return 'unverifiable'
  return file.buildId.toLowerCase() === coreBuildId.toLowerCase() ? 'match' : 'mismatch'
}

/**
 * Finds the file on disk for one module of a core. Order: an explicit file (by the NT_FILE
 * path's basename, the exact path, or the query's role), then sysroot + core path, then each
 * solib-search-path directory + basename, then the core path itself.
 *
 * A file whose build-id differs from the core's is never used: an explicit one is a TomaError
 * (the user asked for it), a searched one is skipped and noted in `tried`. When the build-id
 * cannot be compared (the core or the file has none) the file is accepted with verified=false;
 * among searched candidates a verified one later in the order is preferred to an unverified one.
 */
export function findModuleFile(q: ModuleFileQuery, opts: ModuleSearchOptions): ModuleFileResult {
  const corePath = q.corePath.replace(/ \(deleted\)$/, '')
  const base = path.basename(corePath)

  const explicitPath = opts.explicit?.get(base) ?? opts.explicit?.get(corePath) ??
    (q.role !== undefined ? opts.explicit?.get(q.role) : undefined)
  if (explicitPath !== undefined) {
    const file = (opts.openExplicit ?? ElfFile.load)(explicitPath)
    const check = checkBuildId(file, q.buildId)
    if (check === 'mismatch') {
      throw new TomaError(`${base}: build-id ${file.buildId} of ${explicitPath} does not match ${q.buildId} in the core`)
    }
    return {file, how: 'explicit', path: explicitPath, verified: check === 'match'}
  }

  const candidates: {how: 'sysroot' | 'solib-search-path' | 'path'; path: string}[] = []
  if (opts.sysroot) candidates.push({how: 'sysroot', path: path.join(opts.sysroot, corePath)})
  for (const dir of opts.solibSearchPath ?? []) candidates.push({how: 'solib-search-path', path: path.join(dir, base)})
  // With a sysroot, the host's own file at the core path is still a candidate: the build-id guards it.
  candidates.push({how: 'path', path: corePath})

  const tried: string[] = []
  let unverified: {file: ElfFile; how: 'sysroot' | 'solib-search-path' | 'path'; path: string} | undefined
  const seen = new Set<string>()
  for (const c of candidates) {
    if (seen.has(c.path)) continue
    seen.add(c.path)
    if (!existsSync(c.path)) {
      tried.push(`${c.path}: not found`)
      continue
    }
    let file: ElfFile
    try {
      file = (opts.open ?? ElfFile.load)(c.path)
    } catch (err) {
      if (!(err instanceof TomaError)) throw err
      tried.push(`${c.path}: ${err.message}`)
      continue
    }
    const check = checkBuildId(file, q.buildId)
    if (check === 'mismatch') {
      tried.push(`${c.path}: build-id ${file.buildId} does not match ${q.buildId} in the core`)
      continue
    }
    if (check === 'match') return {file, how: c.how, path: c.path, verified: true}
    tried.push(`${c.path}: found, build-id not verifiable (${q.buildId ? 'file has none' : 'core has none'})`)
    unverified ??= {file, how: c.how, path: c.path}
    // no build-id in the core: nothing later can verify better, take the first file found
    if (!q.buildId) break
  }
  if (unverified) return {...unverified, verified: false}
  const mismatched = tried.some(t => t.includes('does not match'))
  return {
    file: null,
    tried,
    reason: mismatched
      ? `${base}: no file with build-id ${q.buildId} (tried ${tried.length} path${tried.length === 1 ? '' : 's'})`
      : `${base}: no usable file (${tried.join('; ')})`,
  }
}
