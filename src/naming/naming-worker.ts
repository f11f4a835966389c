/**
 * Worker thread body of naming-job.ts: opens the core and loads its program again, names the heap
 * with every tier, and posts the names back (the via bytes transferred, the type ids shared).
 * Modules are loaded inside the body, so that even a failure to load is reported.
 */
import {workerBody} from '../util/worker-body.js'
import type {NamingWorkerData, NamingWorkerMessage} from './naming-job.js'

await workerBody<NamingWorkerData>(async ({data, port}) => {
  const {Core} = await import('../core/core.js')
  const {receivedOverlay} = await import('../core/memory-source.js')
  const {Program} = await import('../program/program.js')
  const {HeapObjects} = await import('../heap/objects.js')
  const {fitsRequest} = await import('../heap/request-fit.js')
  const {TypeNamer} = await import('../graph/types.js')
  const {nameHeap} = await import('./name-heap.js')
  const core = Core.open(data.core.path, receivedOverlay(data.core))
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
