/**
 * Worker thread body of reverse-job.ts: fills the incoming edges of the blocks of targets dealt to
 * it, over the shared graph arrays. Modules are loaded inside the body, so that even a failure to
 * load is reported.
 */
import {workerBody} from '../util/worker-body.js'
import type {ReverseWorkerData} from './reverse-job.js'

await workerBody<ReverseWorkerData>(async ({data}) => {
  const {fillReverse} = await import('./reverse-job.js')
  fillReverse(data, data.thread)
})
