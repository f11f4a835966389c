import type {AllocatorActivity, TouchedFigure} from './heap-model.js'
import type {DamageLog} from './damage.js'
import {isPageLevelLock} from './inside-allocator.js'

/** What holds a cache's figure still while the core is taken: its threads staying out of the allocator, a class's lock, the page-level lock. */
export type FigureGuard = 'threads' | 'class-lock' | 'page-lock'

/** One of the allocator's figures of free memory: its property, the findings' structures that are its damage, what keeps it still. */
export interface FigureRow {
  property: string
  damagedStructure: RegExp
  guard: FigureGuard
  /** A state of the model's own that moves the figure with no guard taken (why, when it holds). */
  alsoInFlight?: string | null
}

/**
 * The allocator's figures that damage (bytes behind bad links, interior entries) or a structure in
 * flight make bounds rather than exact counts. Every model words them alike; each names its own
 * properties (`live`, `rows`) and what guards each (`lockWhy`).
 */
export function touchedFiguresOf(
  damage: DamageLog,
  activity: AllocatorActivity,
  bytesBehind: number,
  figures: {allocator: string; live: string; rows: FigureRow[]; lockWhy: Record<Exclude<FigureGuard, 'threads'>, string>},
): TouchedFigure[] {
  const touched: Record<FigureGuard, boolean> = {
    threads: activity.threads.length > 0,
    'class-lock': activity.locks.some(l => l.sizeClass !== null),
    'page-lock': activity.locks.some(isPageLevelLock),
  }
  const out: TouchedFigure[] = []
  const damaged = (structure: RegExp) => damage.findings.some(f => structure.test(f.structure))
  if (bytesBehind > 0) out.push({property: figures.live, why: `toma counts the ${bytesBehind} bytes behind damaged links as live`, inFlight: false})
  const interior = damage.findings.filter(f => f.kind === 'entry-not-object-start').length
  if (interior > 0) out.push({property: figures.live, why: `${figures.allocator} counts ${interior} entr${interior === 1 ? 'y' : 'ies'} inside live objects as free objects`, inFlight: false})
  if (touched.threads || touched['class-lock'] || touched['page-lock']) {
    out.push({property: figures.live, why: `blocks a thread inside ${figures.allocator} holds mid-operation (taken from a list, not yet returned; freed, not yet on a list) count live`, inFlight: true})
  }
  for (const row of figures.rows) {
    const guardWhy = !touched[row.guard] ? (row.alsoInFlight ?? '') : row.guard === 'threads' ? `a thread was inside ${figures.allocator}` : figures.lockWhy[row.guard]
    const why = damaged(row.damagedStructure) ? 'a damaged list' : guardWhy
    if (why) out.push({property: row.property, why, inFlight: why !== 'a damaged list'})
  }
  return out
}
