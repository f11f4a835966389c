import path from 'node:path'
import type {LoadedModule} from '../../program/program.js'
import type {Recogniser} from '../recogniser.js'
import {VIA_DEBUG_INFO} from '../via.js'
import {libraryCanName} from './library-relevance.js'
import {moduleDebugInfo, type ModuleDebugInfo} from './module-debug-info.js'
import {TypeFlow} from './type-flow.js'
import {flowFromFrames, flowFromGlobals, type RootCounts} from './typed-roots.js'

/** The module has DWARF in its file or a separate debug file (found once, by program.ts). */
function hasDwarf(m: LoadedModule): boolean {
  return m.file !== null && (m.file.section('.debug_info') !== undefined || m.file.section('.zdebug_info') !== undefined || m.debug !== null)
}

/**
 * Tier 2 of issue 30: types from DWARF. Applies when some module has DWARF, in its own file or
 * in its separate debug file. Types flow from every typed global and from the locals of each
 * thread's frames through typed pointers into the heap blocks they reach (type-flow.ts).
 */
export const dwarfRecogniser: Recogniser = {
  label: 'dwarf',
  via: VIA_DEBUG_INFO,
  applies(ctx) {
    return ctx.program.modules.some(hasDwarf)
  },
  run(ctx) {
    const modules: ModuleDebugInfo[] = []
    const idle: string[] = []
    for (const m of ctx.program.modules) {
      const executable = m === ctx.program.executable
      if (!hasDwarf(m)) continue
      if (!executable && !libraryCanName(ctx, m)) {
        idle.push(path.basename(m.module.path))
        continue
      }
      const got = moduleDebugInfo(m, executable)
      if (typeof got === 'string') ctx.note(got)
      else if (got) modules.push(got)
    }
    if (idle.length > 0) ctx.note(`DWARF of ${idle.join(', ')} not read: no global of theirs holds a heap pointer and no thread is in their code`)
    if (modules.length === 0) return
    const structNamed = (name: string) => {
      for (const m of modules) {
        const s = m.info.types.structNamed(name)
        if (s) return s
      }
      return undefined
    }
    const flow = new TypeFlow(ctx, structNamed)
    const counts: RootCounts = {globals: 0, locals: 0, frames: 0}
    flowFromGlobals(flow, modules, counts)
    flowFromFrames(flow, modules, counts)
    flow.run()
    const scalars = flow.scalars.settle(flow.claims)
    const from = modules.map(m => `${path.basename(m.module.module.path)} (${m.from === m.module.file?.path ? 'in the file' : path.basename(m.from)})`).join(', ')
    const kinds = [...flow.claims.namedByKind()].map(([k, n]) => `${n} ${k}`).join(', ')
    ctx.note(`DWARF of ${from}: ${counts.globals} typed globals and ${counts.locals} locals in ${counts.frames} frames reach ${kinds || 'no block'}`)
    const skipped = modules.reduce((s, m) => s + m.info.variables.skipped.locationLists + m.info.variables.skipped.expressions, 0)
    if (skipped > 0) ctx.note(`${skipped} variables with locations this tier does not follow (location lists, registers, other expressions) are not roots`)
    if (scalars > 0) ctx.note(`${scalars} blocks named by pointers to scalars (char*, long*) at their start`)
    if (flow.claims.conflicts > 0) ctx.note(`${flow.claims.conflicts} blocks reached with two types: not named by this tier (conflicts)`)
    if (flow.cut) ctx.note('the walk stopped at its step bound: some blocks reachable through typed pointers are not named')
  },
}
