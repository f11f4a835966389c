/**
 * MallocExtension::GetStats' text (gperftools), as a process or gdb recorded it in a fixture's
 * truth: read here, so that a test compares toma with the allocator's own words, not a re-typing.
 */

/** Free objects per class (thread, transfer and central caches): `class  12 [      176 bytes ] :    13421 objs; ...`. */
export function statsFreeObjects(stats: string): Map<number, number> {
  const out = new Map<number, number>()
  for (const m of stats.matchAll(/^class\s+(\d+) \[\s*(\d+) bytes \] :\s+(\d+) objs;/gm)) out.set(Number(m[1]), Number(m[3]))
  return out
}

/** The page heap's free runs (normal and returned together): `    40 pages *      1 spans ~ ...` by length, and `>128   large *      0 spans`. */
export function statsFreeRuns(stats: string): {byPages: Map<number, number>; large: number} {
  const byPages = new Map<number, number>()
  for (const m of stats.matchAll(/^\s+(\d+) pages \*\s+(\d+) spans ~/gm)) byPages.set(Number(m[1]), Number(m[2]))
  const large = /^>128\s+large \*\s+(\d+) spans ~/m.exec(stats)
  return {byPages, large: large ? Number(large[1]) : NaN}
}

/** toma memory's free runs beside GetStats' lines: runs of 128 pages or fewer by length, and the larger ones counted. */
export function tomaFreeRuns(runs: Array<{pages: number; normal: number; returned: number}>): {byPages: Map<number, number>; large: number} {
  return {
    byPages: new Map(runs.filter(x => x.pages <= 128).map(x => [x.pages, x.normal + x.returned])),
    large: runs.filter(x => x.pages > 128).reduce((n, x) => n + x.normal + x.returned, 0),
  }
}

/** toma memory's free objects per size class (classes with none left out, as GetStats leaves them out). */
export function tomaFreeObjects(classes: Array<{sizeClass: number; spans: number; objectsPerSpan: number; liveObjects: number}>): Map<number, number> {
  return new Map(classes.map(c => [c.sizeClass, c.spans * c.objectsPerSpan - c.liveObjects] as [number, number]).filter(([, n]) => n > 0))
}
