import path from 'node:path'
import type {LoadedModule, Program} from '../program/program.js'
import type {HeapWarning} from '../heap/warnings.js'

/**
 * One warning per module of the core whose file was not found or was refused (build-id mismatch),
 * saying what its absence costs and what to pass. `allocator` is the module TCMalloc lives in.
 */
export function missingModuleWarnings(program: Program, allocator?: LoadedModule): HeapWarning[] {
  const out: HeapWarning[] = []
  for (const m of program.modules) {
    if (m.file) continue
    const name = path.basename(m.module.path.replace(/ \(deleted\)$/, ''))
    const refused = m.how.includes('no file with build-id')
    const what = refused ? `refused (${m.how})` : `not found (${m.module.path})`
    const isExe = m === program.executable
    const isAllocator = m === allocator
    const role = isExe ? `executable ${name}` : isAllocator ? `allocator library ${name}` : `library ${name}`
    const costs: string[] = []
    if (isExe) costs.push('class names of its objects unknown', 'its globals unnamed')
    if (isAllocator) costs.push('TCMalloc globals found by structural signature only')
    if (!isExe && !isAllocator) costs.push('types of its classes unknown', 'its symbols unnamed')
    const pass = isExe ? 'pass --exe or --sysroot' : isAllocator ? 'pass --tcmalloc or --sysroot' : 'pass --sysroot or --solib-search-path'
    out.push({kind: 'module', message: `${role} ${what}: ${costs.join(', ')}; ${pass}`, addresses: [m.module.base]})
  }
  return out
}
