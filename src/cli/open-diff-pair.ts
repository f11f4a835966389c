import fs from 'node:fs'
import type {DiffSide} from '../queries/diff.js'
import {programMismatch} from '../queries/diff-program.js'
import {TomaError} from '../errors.js'
import {openProgram} from '../program/open-program.js'
import {isIndexFile, openIndex} from './open-index.js'

/**
 * The two cores of a diff (`toma diff`, the report's --baseline), each with its index (reused, or
 * made as every query makes it). Cores of different programs are refused before either is
 * analysed: their executables' build-ids are in the cores themselves.
 */
export async function openDiffPair(before: string, after: string, flags: Record<string, unknown>, note: (line: string) => void): Promise<[DiffSide, DiffSide]> {
  refuseOtherProgram(before, after)
  const first = await openDiffSide(before, flags, note)
  return [first, await openDiffSide(after, flags, note)]
}

/**
 * Throws the one-line TomaError when two core files are of different programs, read from the
 * cores alone (no analysis). An index given instead of a core is checked later, by diffCores.
 */
export function refuseOtherProgram(before: string, after: string): void {
  if (![before, after].every(f => fs.existsSync(f) && !isIndexFile(f))) return
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

/** One core of a diff with its index, found or made as every query does. */
export async function openDiffSide(core: string, flags: Record<string, unknown>, note: (line: string) => void): Promise<DiffSide> {
  // Said here: openIndex would call a missing core "the core this index was made from".
  if (!fs.existsSync(core)) throw new TomaError(`${core}: no such file`)
  const o = await openIndex(core, flags, note)
  return {index: o.index, program: o.program(), corePath: o.corePath}
}
