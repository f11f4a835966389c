import type {Program} from './program.js'

/**
 * The sections of procedure-linkage stubs, as gdb's in_plt_section names them (`.plt`, and
 * `.plt.sec` where the stubs are split from the lazy entries).
 */
const PLT_SECTIONS = new Set(['.plt', '.plt.sec'])

/**
 * The PLT's header on aarch64 (the lazy-binding entry, 32 bytes in the psABI's and both linkers'
 * layout): unlike the stubs after it, it pushes (`stp x16, x30, [sp, #-16]!`).
 */
const AARCH64_PLT_HEADER_BYTES = 32

export type PltPlace = 'stub' | 'header'

/**
 * Where an aarch64 code address lies in its module's PLT: in a stub (which pushes nothing and
 * branches with x30 untouched), in `.plt`'s header (which pushes), or in no PLT (undefined). The
 * sections are the module file's (or its debug file's, when stripped of them). x86-64's PLT has
 * call-frame information of its own (`.eh_frame`), so the unwinder asks this only on aarch64.
 */
export function aarch64PltPlaceAt(program: Program, pc: number): PltPlace | undefined {
  const loaded = program.moduleAt(pc)
  if (!loaded?.file) return undefined
  const at = loaded.file.sectionAt(pc - loaded.module.loadBias)
  if (!at || !PLT_SECTIONS.has(at.section.name)) return undefined
  return at.section.name === '.plt' && at.offset < AARCH64_PLT_HEADER_BYTES ? 'header' : 'stub'
}
