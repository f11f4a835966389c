import {existsSync} from 'node:fs'
import path from 'node:path'
import {TomaError} from '../errors.js'
import {ElfFile} from './elf-file.js'
import {fileCrc32} from './symbol-parts.js'

/** gdb's default `debug-file-directory` on Debian and most Linux distributions. */
export const DEFAULT_DEBUG_DIRECTORIES = ['/usr/lib/debug']

export interface DebugSearchOptions {
  /** Looked in before the host's own folders: `<sysroot>/usr/lib/debug/…`. */
  sysroot?: string
  /** Folders holding `.build-id/xx/yyyy.debug` trees and mirrored paths (default /usr/lib/debug). */
  debugDirectories?: string[]
}

export type DebugFileResult =
  | {file: ElfFile; how: 'build-id' | 'debuglink'; path: string}
  | {file: null; tried: string[]}

/**
 * Finds the separate debug file of a module file, the way gdb does:
 *  - by GNU build-id: `DIR/.build-id/xx/yyyy.debug` (xx = the id's first byte, yyyy = the rest);
 *  - by `.gnu_debuglink` name: beside the file, in its `.debug/` subfolder, and under each DIR
 *    followed by the file's folder (`/usr/lib/debug/usr/lib/x86_64-linux-gnu/NAME`);
 * each DIR under `sysroot` first, then as it is. `modulePath` is the path the core names (the
 * file may have been found elsewhere); both folders are tried for the mirrored lookup.
 *
 * A candidate is taken only if it is the same build: equal build-ids when both have one, else
 * (debuglink) the CRC-32 the link records. Files that fail are listed in `tried` with the reason.
 * Only the debug file's headers, symbol tables and notes are read, not its DWARF.
 */
export function findDebugFile(file: ElfFile, modulePath: string, opts: DebugSearchOptions = {}): DebugFileResult {
  const dirs = opts.debugDirectories ?? DEFAULT_DEBUG_DIRECTORIES
  const roots = opts.sysroot ? [opts.sysroot, ''] : ['']
  // A folder given relative (`--debug-file-directory debug`) is relative to the current folder, as
  // every other path argument is; under a sysroot it is inside it.
  const underRoots = (tail: string) => roots.flatMap(root => dirs.map(dir => (root ? path.join(root, dir, tail) : path.resolve(dir, tail))))

  const candidates: {how: 'build-id' | 'debuglink'; path: string}[] = []
  const id = file.buildId?.toLowerCase()
  if (id && /^[0-9a-f]{4,}$/.test(id)) {
    for (const p of underRoots(path.join('.build-id', id.slice(0, 2), `${id.slice(2)}.debug`))) candidates.push({how: 'build-id', path: p})
  }
  const link = file.debugLink
  if (link && link.file === path.basename(link.file)) {
    const fileDir = path.dirname(path.resolve(file.path))
    const coreDir = path.dirname(modulePath.replace(/ \(deleted\)$/, ''))
    const linked = [
      path.join(fileDir, link.file),
      path.join(fileDir, '.debug', link.file),
      ...underRoots(path.join(coreDir, link.file)),
      ...underRoots(path.join(fileDir, link.file)),
    ]
    for (const p of linked) candidates.push({how: 'debuglink', path: p})
  }

  const tried: string[] = []
  const seen = new Set<string>([path.resolve(file.path)])
  for (const c of candidates) {
    const resolved = path.resolve(c.path)
    if (seen.has(resolved)) continue
    seen.add(resolved)
    if (!existsSync(resolved)) continue
    const problem = sameBuildProblem(file, resolved, c.how === 'debuglink' ? link?.crc : undefined)
    if (typeof problem === 'string') {
      tried.push(`${c.path}: ${problem}`)
      continue
    }
    return {file: problem, how: c.how, path: c.path}
  }
  return {file: null, tried}
}

/** The debug file at `candidate` if it belongs to `file`, else why not. */
function sameBuildProblem(file: ElfFile, candidate: string, crc: number | undefined): ElfFile | string {
  let debug: ElfFile
  try {
    debug = ElfFile.loadSymbolParts(candidate)
  } catch (err) {
    if (err instanceof TomaError) return err.message
    throw err
  }
  if (file.buildId && debug.buildId) {
    return file.buildId.toLowerCase() === debug.buildId.toLowerCase() ? debug : `build-id ${debug.buildId} is not ${file.buildId}`
  }
  if (crc === undefined) return 'no build-id to compare'
  const actual = fileCrc32(candidate)
  return actual === crc ? debug : `CRC-32 ${actual.toString(16)} is not the ${crc.toString(16)} that .gnu_debuglink records`
}
