import {setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'

let gc: (() => void) | undefined

/**
 * A full garbage collection now. The analysis drops arrays of hundreds of MB between phases; V8
 * frees them only at its next collection, which a worker thread's allocations (another isolate)
 * never trigger, so without this the dropped arrays and the worker's new ones are resident
 * together. The JS heap itself is small (the data lives in typed arrays), so this costs little.
 * (`--expose-gc` set at run time, as Node's v8 documentation shows for setFlagsFromString.)
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
}
