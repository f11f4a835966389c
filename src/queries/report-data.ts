import type {HeapIndex} from '../index/heap-index.js'
import {RetentionIndex} from '../index/retention-index.js'
import type {Program} from '../program/program.js'
import {classCounts} from './classes.js'
import type {HeapSummary} from './heap-summary.js'
import {leaksWithPublicIds} from './leaks.js'
import {suspectsOf} from './suspects.js'
import {stackOf, threadsOf} from './threads.js'
import {storedSightings} from '../index/sighting-index.js'
import {topObjects, topTypes} from './top.js'
import {memoryReport} from './memory.js'

/** How much of each list a report carries: enough to read, small on a big core (the JSON commands give all). */
export const REPORT_LIMITS = {
  /** Objects at the top of the dominator tree: the treemap's boxes (the table shows fewer). */
  topObjects: 300,
  topTypes: 100,
  /** Leak starting points and largest leaked objects. */
  leaks: 100,
  /** Threads whose frames are unwound and listed (a core of thousands of threads lists the first). */
  stacks: 50,
  /** Share of the live heap a suspect retains (suspects' default). */
  suspectThreshold: 0.1,
  /** Live blocks splitting the page heap's free runs (toma memory's --rows). */
  splitters: 20,
} as const

/**
 * Everything `toma report` shows, from the same analyses the query commands run (analyze's
 * summary from the index, classes, top, suspects, leaks, threads and stacks), as plain data.
 */
export function reportData(program: Program, index: HeapIndex, corePath: string) {
  const retention = new RetentionIndex(index)
  const threads = threadsOf(program, index)
  return {
    core: corePath,
    summary: index.meta.summary as unknown as HeapSummary,
    classes: classCounts(index),
    top: topObjects(index, retention, REPORT_LIMITS.topObjects),
    topTypes: topTypes(index, retention, REPORT_LIMITS.topTypes),
    suspects: suspectsOf(program, index, retention, REPORT_LIMITS.suspectThreshold),
    leaks: leaksWithPublicIds(index, REPORT_LIMITS.leaks, storedSightings(index), program),
    threads,
    stacks: threads.threads.slice(0, REPORT_LIMITS.stacks).map(t => stackOf(program, index, t.tid)),
    /** Where the memory went (toma memory), without example addresses. */
    memory: memoryReport(program, index, {examples: 0, splitters: REPORT_LIMITS.splitters}),
  }
}

export type ReportData = ReturnType<typeof reportData>
