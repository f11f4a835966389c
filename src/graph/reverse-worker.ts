/**
 * Worker thread body of reverse-job.ts: fills the incoming edges of the blocks of targets dealt to
 * it, over the shared graph arrays. However it ends it counts itself finished and wakes the main
 * thread, which reports a failure posted on the port. Modules are loaded inside the try, so that
 * even a failure to load is reported.
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {ReverseWorkerData} from './reverse-job.js'

const data = workerData as ReverseWorkerData
try {
  const {fillReverse} = await import('./reverse-job.js')
  fillReverse(data, data.thread)
} catch (e) {
  data.port.postMessage({error: e instanceof Error ? e.message : String(e)})
} finally {
  // By hand: reverse-job.js may be what failed to load.
  Atomics.add(data.finished, 0, 1)
  Atomics.notify(data.finished, 0)
  parentPort?.close()
}
