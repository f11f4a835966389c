/**
 * Worker thread body of scan-job.ts: opens the core itself, scans the range it was given, then
 * takes ranges of spans one after the other from the shared counter until none is left, handing
 * each range's result back on the port (its edge blocks transferred, not copied). Modules are
 * loaded inside the body, so that even a failure to load is reported.
 */
import {workerBody} from '../util/worker-body.js'
import type {ScanWorkerData, ScanWorkerMessage} from './scan-job.js'

await workerBody<ScanWorkerData>(async ({data, port}) => {
  const post = (message: ScanWorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer)
  const {openMemory} = await import('../core/memory-source.js')
  const {scanBuffer} = await import('../core/read-chunk.js')
  const {scanSpanRange} = await import('./object-scan.js')
  const {memory, close} = openMemory(data.source)
  try {
    const buf = scanBuffer()
    for (let r = data.first; r < data.ranges.length; r = Atomics.add(data.counters, 0, 1)) {
      const result = scanSpanRange(memory, data.tables, data.ranges[r]!, data.outStart, data.firstWords, buf)
      post({range: r, result}, result.edges.to.map(a => a.buffer as ArrayBuffer))
    }
  } finally {
    close()
  }
})
