import {existsSync} from 'node:fs'
import path from 'node:path'
import {TomaError} from '../errors.js'
import {ElfFile} from './elf-file.js'
import {checkBuildId, type ModuleSearchOptions} from './find-module-file.js'

/** A module as the core names it: its path (NT_FILE) and build-id. */
export interface NamedModule {
  path: string
  buildId: string | null
}

/**
 * The file a module flag names. A path (anything with a `/`) is taken as it is. A bare name
 * (`libtcmalloc_minimal.so.4`, as a user types a soname) is looked up the way module files are:
 * for each module of the core called so (its file name, or a file name the soname begins, as
 * `libtcmalloc_minimal.so.4.5.10`), under `--sysroot`, along `--solib-search-path`, at the core's
 * own path, in that order, by both names; a file whose build-id differs from the module's is
 * passed over. Then the name beside any module's file or along the search path, when its build-id
 * is that module's (a soname unlike the file name). The current folder comes last. Throws a
 * one-line TomaError when nothing is found.
 */
export function resolveModuleName(flag: string, name: string, modules: NamedModule[], opts: ModuleSearchOptions, cwd = process.cwd()): string {
  if (name.includes('/')) return name
  const named = modules.filter(m => {
    const base = path.basename(m.path.replace(/ \(deleted\)$/, ''))
    return base === name || base.startsWith(name + '.')
  })
  const tried: string[] = []
  for (const m of named) {
    const corePath = m.path.replace(/ \(deleted\)$/, '')
    const names = [...new Set([name, path.basename(corePath)])]
    const candidates = [
      ...(opts.sysroot ? names.map(n => path.join(opts.sysroot!, path.dirname(corePath), n)) : []),
      ...(opts.solibSearchPath ?? []).flatMap(dir => names.map(n => path.join(dir, n))),
      ...names.map(n => path.join(path.dirname(corePath), n)),
    ]
    for (const candidate of candidates) {
      if (tried.includes(candidate)) continue
      tried.push(candidate)
      const file = loadIfThere(candidate)
      if (file && checkBuildId(file, m.buildId) !== 'mismatch') return candidate
    }
  }
  // A soname that is no prefix of the file's name (libpthread.so.0 → libpthread-2.31.so): the
  // name beside any module's own file, or along the search path, taken when its build-id is that
  // of one of the core's modules.
  const ids = new Set(modules.flatMap(m => (m.buildId ? [m.buildId.toLowerCase()] : [])))
  const dirs = [...new Set(modules.map(m => path.dirname(m.path.replace(/ \(deleted\)$/, ''))))]
  const elsewhere = [
    ...(opts.sysroot ? dirs.map(d => path.join(opts.sysroot!, d, name)) : []),
    ...(opts.solibSearchPath ?? []).map(d => path.join(d, name)),
    ...dirs.map(d => path.join(d, name)),
  ]
  for (const candidate of elsewhere) {
    if (tried.includes(candidate)) continue
    tried.push(candidate)
    const id = loadIfThere(candidate)?.buildId?.toLowerCase()
    if (id && ids.has(id)) return candidate
  }
  const here = path.join(cwd, name)
  if (existsSync(here)) return here
  tried.push(here)
  const what = named.length > 0 ? `no file with the build-id of the core's ${named.map(m => path.basename(m.path)).join(', ')}` : 'no module of the core has that name'
  throw new TomaError(`${flag} ${name}: ${what}, and no such file in the current folder (tried ${tried.join(', ')})`)
}

/** The module file at a path, or null when there is none or it is no readable ELF module. */
function loadIfThere(file: string): ElfFile | null {
  if (!existsSync(file)) return null
  try {
    return ElfFile.load(file)
  } catch (err) {
    if (err instanceof TomaError) return null
    throw err
  }
}
