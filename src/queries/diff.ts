import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {STATE_NAMES} from '../heap/states.js'
import {matchObjects} from './diff-objects.js'
import {retainedGrowth} from './diff-growth.js'
import {programMismatch} from './diff-program.js'
import {fragmentationChange} from './diff-fragmentation.js'
import type {HeapSummary} from './heap-summary.js'
import {TomaError} from '../errors.js'

/** One core of a diff: its index and the core with its module files. */
export interface DiffSide {
  index: HeapIndex
  program: Program
  corePath: string
}

/**
 * What changed between two cores of one process: per type, the objects born, died and kept; the
 * kept objects whose retained size grew most, each under its holder; bytes per TCMalloc state;
 * how fragmentation changed (per size class, the page heap's free bytes, the heap's accounting).
 * Plain JSON-able data (`toma diff --json`, and the HTML report's baseline section).
 * Throws a TomaError when the cores are of different programs.
 */
export function diffCores(before: DiffSide, after: DiffSide, options: {growthLimit?: number} = {}) {
  const identity = programMismatch(before.program, after.program)
  if (identity.problem) throw new TomaError(identity.problem)
  const {types, kept} = matchObjects(before.index, after.index)
  const growth = retainedGrowth(before.index, after.index, kept, options.growthLimit ?? 10)
  const total = (key: 'born' | 'died' | 'kept') =>
    types.reduce((t, r) => ({objects: t.objects + r[key].objects, bytes: t.bytes + r[key].bytes}), {objects: 0, bytes: 0})
  return {
    before: {core: before.corePath, pid: before.program.core.process.pid},
    after: {core: after.corePath, pid: after.program.core.process.pid},
    executable: before.program.executable ? {path: before.program.executable.module.path, buildId: before.program.executable.module.buildId} : null,
    totals: {born: total('born'), died: total('died'), kept: total('kept')},
    types,
    growth: growth.holders,
    keptGrown: growth.keptGrown,
    states: stateChanges(before.index, after.index),
    fragmentation: fragmentationChange(before, after),
    warnings: [...(identity.unchecked ? [identity.unchecked] : []), ...sizeClassWarning(before.index, after.index)],
  }
}

export type CoreDiff = ReturnType<typeof diffCores>

/** Objects and bytes per TCMalloc state in each core (from each analysis's summary). */
function stateChanges(before: HeapIndex, after: HeapIndex) {
  const states = (i: HeapIndex) => (i.meta.summary as unknown as HeapSummary).states
  const a = states(before)
  const b = states(after)
  return STATE_NAMES.map(state => {
    const x = a.find(s => s.state === state) ?? {objects: 0, bytes: 0}
    const y = b.find(s => s.state === state) ?? {objects: 0, bytes: 0}
    return {state, before: {objects: x.objects, bytes: x.bytes}, after: {objects: y.objects, bytes: y.bytes}, change: {objects: y.objects - x.objects, bytes: y.bytes - x.bytes}}
  })
}

/**
 * One program runs with one TCMalloc, but a core given with another --tcmalloc (or a process
 * started with LD_PRELOAD of another build) has other size classes: a slot's class number then
 * means another size, and matching by it is not exact. Said, not silently done.
 */
function sizeClassWarning(before: HeapIndex, after: HeapIndex): string[] {
  const a = before.meta.sizeClassSizes
  const b = after.meta.sizeClassSizes
  if (a.length === b.length && a.every((v, i) => v === b[i])) return []
  return ['TCMalloc\'s size classes differ between the cores (another libtcmalloc?): objects whose size class number is the same but whose size differs count as died and born']
}
