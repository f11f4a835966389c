import {TomaError} from '../errors.js'
import {ROOT_KIND_NAMES} from './csr.js'

/** What `--roots` calls each root kind, index for index with ROOT_KIND_NAMES. */
export const ROOT_OPTION_NAMES = ['registers', 'stacks', 'globals', 'tls', 'mappings', 'cached-stacks'] as const

/** The root kinds a `--roots` list names (comma-separated, e.g. `registers,stacks,globals`). */
export function parseRootKinds(list: string): Set<number> {
  const kinds = new Set<number>()
  for (const word of list.split(',').map(w => w.trim()).filter(w => w.length > 0)) {
    const k = (ROOT_OPTION_NAMES as readonly string[]).indexOf(word)
    if (k < 0) throw new TomaError(`--roots ${list}: unknown root kind '${word}' (the kinds are ${ROOT_OPTION_NAMES.join(', ')})`)
    kinds.add(k)
  }
  if (kinds.size === 0) throw new TomaError(`--roots ${JSON.stringify(list)}: name at least one root kind (${ROOT_OPTION_NAMES.join(', ')})`)
  return kinds
}

if (ROOT_OPTION_NAMES.length !== ROOT_KIND_NAMES.length) throw new Error('ROOT_OPTION_NAMES must name every root kind')
