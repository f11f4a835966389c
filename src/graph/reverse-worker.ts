/**
 * Worker thread body of reverse-job.ts: counts, then fills, the incoming edges of the blocks of
 * targets dealt to it, over the shared graph arrays. However it ends it counts itself finished
 * (and, if it failed before counting, counted: every thread waits for all the counts) and wakes
 * the main thread, which reports a failure posted on the port. Modules are loaded inside the try, so that
 * even a failure to load is reported.
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {ReverseWorkerData} from './reverse-job.js'

const data = workerData as ReverseWorkerData
let counted = false
try {
  const {countReverse, fillReverse} = await import('./reverse-job.js')
  countReverse(data, data.thread)
  counted = true
  fillReverse(data, data.thread)
} catch (e) {
  data.port.postMessage({error: e instanceof Error ? e.message : String(e)})
} finally {
  // By hand, not with reverse-job's arrive(): that module may be what failed to load.
  for (const counter of counted ? [data.finished] : [data.counted, data.finished]) {
    Atomics.add(counter, 0, 1)
    Atomics.notify(counter, 0)
  }
  parentPort?.close()
}
