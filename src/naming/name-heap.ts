import type {Program} from '../program/program.js'
import type {HeapObjects} from '../heap/objects.js'
import type {TypeNamer} from '../graph/types.js'
import type {RootRange} from '../graph/roots.js'
import type {ObjectTypes} from '../graph/object-types.js'
import {ObjectNames} from './object-names.js'
import type {NamingContext, Recogniser} from './recogniser.js'
import {RECOGNISERS} from './recognisers.js'

export interface NamingResult {
  names: ObjectNames
  /** Findings, one line each. */
  notes: string[]
  /** Inconsistencies met, with addresses. */
  warnings: Array<{message: string; address: number}>
}

/** Warnings kept per recogniser (the rest are counted in one line). */
const WARNINGS_KEPT = 50

/**
 * Names the objects the vtable tier left unnamed, with every recogniser that applies to this
 * program, in order. A recogniser that throws (a bug met on some core) stops there and says so in
 * a warning; the names it gave before were each proven, and the others' names are untouched.
 */
export function nameHeap(
  program: Program,
  objects: HeapObjects,
  live: number,
  vtables: TypeNamer,
  roots: readonly RootRange[],
  vtableTypes: ObjectTypes,
  fits: (request: number, blockSize: number) => boolean,
  recognisers: readonly Recogniser[] = RECOGNISERS,
): NamingResult {
  const names = ObjectNames.startingFrom(vtableTypes)
  const notes: string[] = []
  const warnings: NamingResult['warnings'] = []
  for (const r of recognisers) {
    let kept = 0
    let dropped = 0
    const ctx: NamingContext = {
      program, objects, live, vtables, roots, names, fits,
      note: m => notes.push(`[${r.label}] ${m}`),
      warn: (message, address) => {
        if (kept++ < WARNINGS_KEPT) warnings.push({message: `[${r.label}] ${message}`, address})
        else dropped++
      },
    }
    if (!r.applies(ctx)) continue
    try {
      r.run(ctx)
    } catch (e) {
      warnings.push({message: `[${r.label}] stopped: ${e instanceof Error ? e.message : String(e)}`, address: 0})
    }
    if (dropped > 0) warnings.push({message: `[${r.label}] ${dropped} more warnings like these`, address: 0})
  }
  return {names, notes, warnings}
}
