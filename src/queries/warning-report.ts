import {hex} from '../errors.js'
import type {CrossCheck} from '../heap/heap-model.js'
import type {HeapWarning, Warnings} from '../heap/warnings.js'

/** The phases of an analysis, in the order they run; every warning belongs to one. */
export const PHASES = ['modules', 'allocator', 'page map', 'scan', 'roots', 'types', 'reachability', 'cross-check'] as const
export type Phase = (typeof PHASES)[number]

/** Warnings listed per phase in the report and --json; past that they are counted (`omitted`). */
export const LISTED_PER_PHASE = 100

/** Which phase a warning kind comes from (kinds the allocator model adds later fall under 'allocator'). */
const PHASE_OF_KIND: Record<string, Phase> = {
  pagemap: 'page map',
  span: 'page map',
  scan: 'scan',
  roots: 'roots',
  types: 'types',
  reachability: 'reachability',
  module: 'modules',
  'cross-check': 'cross-check',
}

export function phaseOf(kind: string): Phase {
  return PHASE_OF_KIND[kind] ?? 'allocator'
}

export interface ReportedWarning {
  phase: Phase
  kind: string
  message: string
  addresses: string[]
  /** Why the structure may have been mid-update when the core was taken; absent when it was not. */
  inFlight?: string
}

/**
 * Every warning of every phase, as the report shows it: the first LISTED_PER_PHASE of each phase
 * listed (so one phase's flood cannot hide another's), every one counted by phase and by kind, and
 * what was not listed counted in `omitted`. An unequal cross-check figure is itself a warning.
 * `consistent` is true only when there is no warning at all.
 */
export function reportWarnings(sources: Warnings[], allocatorName: string, crossCheck: CrossCheck[], extra: HeapWarning[] = [], bounds: ReadonlyMap<string, string> = new Map()) {
  const all: HeapWarning[] = [...extra]
  const byKind: Record<string, number> = {}
  const count = (kind: string, n: number) => (byKind[kind] = (byKind[kind] ?? 0) + n)
  for (const w of extra) count(w.kind, 1)
  for (const source of sources) {
    all.push(...source.list)
    for (const [kind, n] of source.counts) count(kind, n)
  }
  for (const c of crossCheck) {
    if (c.toma === c.allocator) continue
    const d = c.toma - c.allocator
    const bound = bounds.get(c.property)
    all.push({kind: 'cross-check', message: `${c.name}: toma counts ${c.toma}, ${allocatorName}'s counters (${c.property}) say ${c.allocator}; differs by ${d}`, addresses: [], ...(bound ? {inFlight: bound} : {})})
    count('cross-check', 1)
  }
  const byPhase = Object.fromEntries(PHASES.map(p => [p, 0])) as Record<Phase, number>
  for (const [kind, n] of Object.entries(byKind)) byPhase[phaseOf(kind)] += n
  const listedOf = Object.fromEntries(PHASES.map(p => [p, 0])) as Record<Phase, number>
  const list: ReportedWarning[] = []
  for (const phase of PHASES) {
    for (const w of all) {
      if (phaseOf(w.kind) !== phase || listedOf[phase] >= LISTED_PER_PHASE) continue
      listedOf[phase]++
      list.push({phase, kind: w.kind, message: w.message, addresses: w.addresses.map(a => hex(a)), ...(w.inFlight ? {inFlight: w.inFlight} : {})})
    }
  }
  const omitted = Object.fromEntries(PHASES.map(p => [p, byPhase[p] - listedOf[p]]).filter(([, n]) => (n as number) > 0)) as Partial<Record<Phase, number>>
  const total = PHASES.reduce((n, p) => n + byPhase[p], 0)
  return {total, consistent: total === 0, byPhase, byKind, list, omitted}
}

export type WarningReport = ReturnType<typeof reportWarnings>
