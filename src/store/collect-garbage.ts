import {createRequire} from 'node:module'

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
    // Loaded here, not imported: node:v8 costs a query's start some 2 ms, and only an analysis collects.
    const require = createRequire(import.meta.url)
    const v8: typeof import('node:v8') = require('node:v8')
    const vm: typeof import('node:vm') = require('node:vm')
    v8.setFlagsFromString('--expose-gc')
    // The collection frees the arrays it finds dropped at once, not in a concurrent sweep that
    // ends at the thread's next collection (seconds later where that is the next of these).
    v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping')
    gc = vm.runInNewContext('gc') as () => void
  }
  gc()
}
