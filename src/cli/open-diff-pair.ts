import fs from 'node:fs'
import type {DiffSide} from '../analysis/diff.js'
import {programMismatch} from '../analysis/diff-program.js'
import {TomaError} from '../errors.js'
import {openProgram} from '../program/open-program.js'
import {isIndexFile, openIndex} from './open-index.js'

/**
 * The two cores of a diff (`toma diff`, the report's --baseline), each with its index (reused, or
 * made as every query makes it). Cores of different programs are refused before either is
 * analysed: their executables' build-ids are in the cores themselves.
 */
export async function openDiffPair(before: string, after: string, flags: Record<string, unknown>, note: (line: string) => void): Promise<[DiffSide, DiffSide]> {
  if ([before, after].every(f => fs.existsSync(f) && !isIndexFile(f))) {
    const a = openProgram(before, {})
    const b = openProgram(after, {})
    try {
      const {problem} = programMismatch(a, b)
      if (problem) throw new TomaError(problem)
    } finally {
      a.core.close()
      b.core.close()
    }
  }
  const open = async (core: string): Promise<DiffSide> => {
    const o = await openIndex(core, flags, note)
    return {index: o.index, program: o.program(), corePath: o.corePath}
  }
  const first = await open(before)
  return [first, await open(after)]
}
