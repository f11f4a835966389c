/**
 * Worker thread body of naming-job.ts: opens the core and loads its program again, names the heap
 * with every tier, and posts the names back (the via bytes transferred, the type ids shared).
 * Modules are loaded inside the body, so that even a failure to load is reported.
 */
import {workerBody} from '../util/worker-body.js'
import type {NamingWorkerData, NamingWorkerMessage} from './naming-job.js'

/**
 * The read cache's block here: the tiers' reads are scattered (the DWARF tier's flow goes from
 * block to block as pointers lead), and a 64 KiB read per miss copied mostly bytes never used. With
 * 16 KiB blocks (the cache as large, 64 MiB) nameHeap took 10.1 and 11.0 s of CPU against 12.6 and
 * 12.8 s with 64 KiB (alternating runs, workloaddemo's timing core; 4 KiB: 11.7 and 10.2 s).
 */
const SCATTERED_READS_BLOCK = 1 << 14

await workerBody<NamingWorkerData>(async ({data, port}) => {
  const {Core} = await import('../core/core.js')
  const {receivedOverlay} = await import('../core/memory-source.js')
  const {Program} = await import('../program/program.js')
  const {HeapObjects} = await import('../heap/objects.js')
  const {fitsRequest} = await import('../heap/request-fit.js')
  const {TypeNamer} = await import('../graph/types.js')
  const {nameHeap} = await import('./name-heap.js')
  const core = Core.open(data.core.path, receivedOverlay(data.core), SCATTERED_READS_BLOCK)
  try {
    const program = Program.load(core, data.program)
    const objects = new HeapObjects(data.spans, data.pageSize, () => data.state)
    const {names, notes, warnings} = nameHeap(program, objects, data.live, new TypeNamer(program), data.roots, data.vtableTypes, fitsRequest(data.fit))
    const parts = names.parts()
    const message: NamingWorkerMessage = {names: parts, notes, warnings}
    port.postMessage(message, [parts.via.buffer as ArrayBuffer])
  } finally {
    core.close()
  }
})
