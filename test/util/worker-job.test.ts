import fs from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {TomaError} from '../../src/errors.js'
import {WorkerJob, type WorkerFailure} from '../../src/util/worker-job.js'
import {testTemp} from '../helpers/test-temp.js'

// The helper every worker job starts its thread with: a failure in the worker's body comes back
// as the error to throw, a TomaError (the user's to act on) still one.
const work = testTemp('toma-worker-job-')
afterAll(() => fs.rmSync(work, {recursive: true, force: true}))
const dist = pathToFileURL(path.resolve('dist/src')).href

function script(body: string): URL {
  const file = path.join(work, `w${fs.readdirSync(work).length}.mjs`)
  fs.writeFileSync(file, `import {workerBody} from '${dist}/util/worker-body.js'\nawait workerBody(async ({data, port}) => {${body}})\n`)
  return pathToFileURL(file)
}

describe('WorkerJob', () => {
  it('hands the data over and waits for the body to end', () => {
    const shared = new Int32Array(new SharedArrayBuffer(4))
    const job = WorkerJob.start('test worker', script('data.shared[0] = data.value; port.postMessage({ok: 1})'), {shared, value: 7})
    job.awaitDone()
    expect(job.check(job.next<{ok: number}>())).toEqual({ok: 1})
    expect(shared[0]).toBe(7)
    job.end()
  })

  it('a TomaError in the worker is one here; anything else names the job', () => {
    const toma = WorkerJob.start('test worker', script(`const {TomaError} = await import('${dist}/errors.js'); throw new TomaError('bad core')`), null)
    toma.awaitDone()
    const f = toma.next<WorkerFailure>()
    expect(() => toma.check(f)).toThrow(TomaError)
    expect(() => toma.check(f)).toThrow('bad core')
    toma.end()
    const bug = WorkerJob.start('test worker', script(`throw new RangeError('oops')`), null)
    bug.awaitDone()
    const g = bug.next<WorkerFailure>()
    expect(() => bug.check(g)).toThrow('test worker failed: oops')
    expect(() => bug.check(g)).not.toThrow(TomaError)
    bug.end()
  })
})
