import type {Program, ProgramOptions} from '../program/program.js'
import type {MemorySource} from '../core/memory-source.js'
import type {HeapObjects} from '../heap/objects.js'
import type {SpanObjectArrays} from '../heap/slot-table.js'
import type {RequestFit} from '../heap/request-fit.js'
import type {RootRange} from '../graph/roots.js'
import type {ObjectTypes} from '../graph/object-types.js'
import {WorkerJob, type WorkerFailure} from '../util/worker-job.js'
import {sharedCopy} from '../util/shared-arrays.js'
import {ObjectNames, type ObjectNamesParts} from './object-names.js'
import type {NamingResult} from './name-heap.js'

/** What the naming worker is handed: plain data, and the shared state bytes and type ids. */
export interface NamingWorkerData {
  core: MemorySource
  program: ProgramOptions
  spans: SpanObjectArrays
  pageSize: number
  /** Shared: the heap model's state bytes. */
  state: Uint8Array
  live: number
  roots: RootRange[]
  /** A shared copy of the vtable tier's type ids: the worker names in it, as nameHeap does on one thread. */
  vtableTypes: ObjectTypes
  fit: RequestFit
}

/** The worker's one message: what nameHeap returned, the names as plain data. */
export type NamingWorkerMessage = {names: ObjectNamesParts; notes: string[]; warnings: NamingResult['warnings']} | WorkerFailure

/** The naming tiers running on their worker thread. */
export interface PendingNaming {
  /** Waits for the names (throws the worker's failure). */
  finish(): NamingResult
  /** Ends the worker, done or not (an error came first). */
  release(): void
}

/**
 * Runs every naming tier (nameHeap) on a worker thread of its own, which loads the program again
 * from the core and the options it was loaded with: the tiers read only the process image, the
 * slot table, the state bytes, the root ranges and the vtable tier's names, none of which the
 * graph phases change, so they run beside the whole graph stage and name exactly as on this
 * thread. The tiers themselves stay one thread: each slot keeps the first name given, in the
 * tiers' order and, within a tier, in address order.
 */
export function nameHeapOnWorker(program: Program, objects: HeapObjects, live: number, roots: readonly RootRange[], vtableTypes: ObjectTypes, fit: RequestFit): PendingNaming {
  const {start, pages, objectSize, firstObject, objectCount} = objects.spans
  const data: NamingWorkerData = {
    core: program.core.memorySource(),
    program: program.options,
    spans: {start, pages, objectSize, firstObject, objectCount},
    pageSize: objects.pageSize,
    state: objects.state,
    live,
    roots: [...roots],
    // The worker names in a copy: this thread goes on reading the vtable tier's ids meanwhile (the
    // model stage's summary and index hold them).
    vtableTypes: {...vtableTypes, typeOf: sharedCopy(vtableTypes.typeOf)},
    fit,
  }
  const job = WorkerJob.start('naming worker', SCRIPT, data)
  let ended = false
  const release = (): void => {
    if (!ended) job.end()
    ended = true
  }
  return {
    finish() {
      try {
        job.awaitDone()
        const m = job.check(job.next<NamingWorkerMessage>())
        if (!m) throw new Error('naming worker ended without its names')
        return {names: new ObjectNames(m.names), notes: m.notes, warnings: m.warnings}
      } finally {
        release()
      }
    },
    release,
  }
}

const SCRIPT = new URL('./naming-worker.js', import.meta.url)
