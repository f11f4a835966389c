import type {Program} from './program.js'

/**
 * A NUL-terminated string at a process address: from the core, else from the file of the module
 * whose image holds it (gcore leaves read-only file pages, .rodata, out of the core).
 */
export function imageCString(program: Program, addr: number, max: number): string | undefined {
  if (!Number.isSafeInteger(addr) || addr < 0) return undefined
  const s = program.core.memory.readCString(addr, max)
  if (s !== undefined) return s
  const m = program.moduleAt(addr)
  return m?.file?.readCString(addr - m.module.loadBias, max) ?? undefined
}
