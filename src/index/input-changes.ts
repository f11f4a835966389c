import path from 'node:path'
import {sameFile} from '../elf/file-identity.js'
import type {IndexInputs} from './index-meta.js'

const flag = (name: string, value: string | boolean | number) => (value === true ? `--${name}` : `--${name} ${String(value)}`)
const fileOf = (f: string | null, id: string | null) => (f === null ? 'no file' : `${f}${id ? ` (build-id ${id})` : ''}`)

/** Flags that only choose a module's file: the files used are compared instead. */
const FILE_FLAGS = new Set(['exe', 'tcmalloc'])

/** Whether every module has the file the index was made with: same path and build-id, and the same version of the file where both know it. */
function sameModuleFiles(stored: IndexInputs, current: IndexInputs): boolean {
  return current.modules.every(m => {
    const before = stored.modules.find(s => s.module === m.module)
    if (!before || before.file !== m.file || before.buildId !== m.buildId) return false
    return !before.identity || !m.identity || sameFile(m.identity, before.identity)
  })
}

/**
 * Why an index made from `stored` does not answer for `current`, as the one line a query prints
 * ("index made without --exe; analysing again with it"), or null when every input is the same:
 * the core, each option, and the file used for each module (path and build-id).
 */
export function inputChange(stored: IndexInputs, current: IndexInputs): string | null {
  if (stored.core.path !== current.core.path) return `index made from another core (${stored.core.path}); analysing ${current.core.path}`
  if (stored.core.size !== current.core.size || stored.core.mtimeMs !== current.core.mtimeMs) return 'index is stale (the core changed since it was made); analysing again'
  const keys = new Set([...Object.keys(stored.options), ...Object.keys(current.options)])
  const sameFiles = sameModuleFiles(stored, current)
  for (const k of [...keys].sort()) {
    const was = stored.options[k]
    const now = current.options[k]
    if (was === now) continue
    // --exe or --tcmalloc naming the very file the index was made with (found then by itself):
    // the analysis would be the same one.
    if (FILE_FLAGS.has(k) && sameFiles) continue
    if (was === undefined) return `index made without --${k}; analysing again with ${now === true ? 'it' : flag(k, now!)}`
    if (now === undefined) return `index made with ${flag(k, was)}; analysing again without it`
    return `index made with ${flag(k, was)}; analysing again with ${flag(k, now)}`
  }
  for (const m of current.modules) {
    const before = stored.modules.find(s => s.module === m.module)
    const name = path.basename(m.module)
    if (!before) return `index made without module ${name}; analysing again`
    if (before.file !== m.file || before.buildId !== m.buildId) {
      return `index made with ${fileOf(before.file, before.buildId)} for ${name}; analysing again with ${fileOf(m.file, m.buildId)}`
    }
  }
  return null
}
