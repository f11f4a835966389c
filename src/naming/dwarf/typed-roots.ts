import type {FunctionFrame} from '../../elf/dwarf/variables.js'
import {unwindThread} from '../../program/unwind.js'
import type {ModuleDebugInfo} from './module-debug-info.js'
import type {TypeFlow} from './type-flow.js'

export interface RootCounts {
  globals: number
  locals: number
  frames: number
}

/** Every global of every module with DWARF, at its address in the process (its load bias added). */
export function flowFromGlobals(flow: TypeFlow, modules: readonly ModuleDebugInfo[], counts: RootCounts): void {
  for (const m of modules) {
    const bias = m.module.module.loadBias
    for (const g of m.info.variables.globals) {
      if (!flow.hasPointers(g.type)) continue
      counts.globals++
      flow.root(g.address + bias, g.type)
    }
  }
}

/**
 * The locals and parameters of each thread's frames: the function holding the frame's pc, each variable in scope there at
 * CFA + its DW_OP_fbreg offset (the frame base is the CFA: variables.ts keeps only such functions).
 */
export function flowFromFrames(flow: TypeFlow, modules: readonly ModuleDebugInfo[], counts: RootCounts): void {
  const program = flow.ctx.program
  const byModule = new Map(modules.map(m => [m.module, sortedFunctions(m.info.variables.functions)]))
  for (const thread of program.core.threads) {
    let callee: {signalFrame: boolean} | null = null
    for (const frame of unwindThread(program, thread).frames) {
      // Above a call the pc is a return address, past the call: its caller's code is just before.
      // Frame 0 and a frame a signal interrupted are at the instruction itself.
      const pc = frame.level === 0 || callee?.signalFrame ? frame.pc : frame.pc - 1
      callee = frame
      const loaded = program.moduleAt(pc)
      const functions = loaded && byModule.get(loaded)
      if (!loaded || !functions) continue
      const vaddr = pc - loaded.module.loadBias
      const fn = functionAt(functions, vaddr)
      if (!fn) continue
      counts.frames++
      for (const v of fn.variables) {
        if (!v.scope.some(([low, high]) => low <= vaddr && vaddr < high) || !flow.hasPointers(v.type)) continue
        counts.locals++
        flow.root(frame.cfa + v.cfaOffset, v.type)
      }
    }
  }
}

/** A function's code range, one entry per range of a function split in parts. */
interface CodeRange {
  low: number
  high: number
  fn: FunctionFrame
}

function sortedFunctions(functions: FunctionFrame[]): CodeRange[] {
  return functions.flatMap(fn => fn.ranges.map(([low, high]) => ({low, high, fn}))).sort((a, b) => a.low - b.low)
}

/** The function whose code holds `vaddr` (binary search on sorted, non-overlapping ranges). */
function functionAt(sorted: CodeRange[], vaddr: number): FunctionFrame | undefined {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2)
    const f = sorted[mid]!
    if (vaddr < f.low) hi = mid - 1
    else if (vaddr >= f.high) lo = mid + 1
    else return f.fn
  }
  return undefined
}
