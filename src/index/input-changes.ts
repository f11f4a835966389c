import path from 'node:path'
import type {IndexInputs} from './index-meta.js'

const flag = (name: string, value: string | boolean | number) => (value === true ? `--${name}` : `--${name} ${String(value)}`)
const fileOf = (f: string | null, id: string | null) => (f === null ? 'no file' : `${f}${id ? ` (build-id ${id})` : ''}`)

/**
 * Why an index made from `stored` does not answer for `current`, as the one line a query prints
 * ("index made without --exe; analysing again with it"), or null when every input is the same:
 * the core, each option, and the file used for each module (path and build-id).
 */
export function inputChange(stored: IndexInputs, current: IndexInputs): string | null {
  if (stored.core.path !== current.core.path) return `index made from another core (${stored.core.path}); analysing ${current.core.path}`
  if (stored.core.size !== current.core.size || stored.core.mtimeMs !== current.core.mtimeMs) return 'index is stale (the core changed since it was made); analysing again'
  const keys = new Set([...Object.keys(stored.options), ...Object.keys(current.options)])
  for (const k of [...keys].sort()) {
    const was = stored.options[k]
    const now = current.options[k]
    if (was === now) continue
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
