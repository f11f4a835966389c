import type {GoogleLayout} from './layout.js'

/** Layouts are a few levels deep; deeper is not a layout. */
const MAX_DEPTH = 8

/**
 * Every field where two layouts differ, by its path (`span.allocated`,
 * `shifts.13.backEnd.trackerUsed`, `slab.cpuCount`), with both values: what a reading of a build's
 * DWARF and the table's family for it disagree on. Only the ShiftLayout of `pageShift` is
 * compared; family, covers and build (names, not layout) are not, nor fields `a` lacks.
 */
export function layoutDifferences(a: GoogleLayout, b: GoogleLayout, pageShift: number): string[] {
  const out: string[] = []
  const key = String(pageShift)
  const strip = (l: GoogleLayout) => ({...l, family: undefined, covers: undefined, build: undefined, shifts: {[key]: l.shifts[key]}})
  compare(strip(a), strip(b), '', out, 0)
  return out
}

function compare(a: unknown, b: unknown, path: string, out: string[], depth: number): void {
  // A field the first layout (the table's) does not place is no disagreement: the table knows
  // nothing of it (the regions of an older family), and the second's reading of it stands.
  if (a === undefined) return
  if (isRecord(a) && isRecord(b) && depth < MAX_DEPTH) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()
    for (const k of keys) compare(a[k], b[k], path === '' ? k : `${path}.${k}`, out, depth + 1)
    return
  }
  if (a !== b) out.push(`${path}: ${show(a)} vs ${show(b)}`)
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null
}

function show(v: unknown): string {
  return v === undefined ? 'absent' : JSON.stringify(v)
}
