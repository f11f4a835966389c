/**
 * Worker thread body of scan-job.ts: opens the core itself, scans the range it was given, then
 * takes ranges of spans one after the other from the shared counter until none is left, handing
 * each range's result back on the port (its edge blocks transferred, not copied); then counts
 * itself finished and wakes the main thread. Modules are loaded inside the try, so that even a
 * failure to load is reported.
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {ScanWorkerData, ScanWorkerMessage} from './scan-job.js'

const data = workerData as ScanWorkerData
const post = (message: ScanWorkerMessage, transfer: ArrayBuffer[] = []) => data.port.postMessage(message, transfer)
try {
  const {openMemory} = await import('../core/memory-source.js')
  const {scanBuffer, scanSpanRange} = await import('./object-scan.js')
  const {memory, close} = openMemory(data.source)
  try {
    const buf = scanBuffer()
    for (let r = data.first; r < data.ranges.length; r = Atomics.add(data.counters, 0, 1)) {
      const result = scanSpanRange(memory, data.tables, data.ranges[r]!, data.outStart, data.firstWords, buf)
      const e = result.edges
      post({range: r, result}, e.to.map(a => a.buffer as ArrayBuffer))
    }
  } finally {
    close()
  }
} catch (e) {
  const {TomaError} = await import('../errors.js')
  post({error: e instanceof Error ? e.message : String(e), toma: e instanceof TomaError})
} finally {
  Atomics.add(data.counters, 1, 1)
  Atomics.notify(data.counters, 1)
  parentPort?.close()
}
