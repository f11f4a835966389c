/**
 * Worker thread body of background-writes.ts: writes each array it is handed at its position,
 * in the order handed, counting every write done (and flagging a failed one) in the signal the
 * handing thread waits on.
 */
import fs from 'node:fs'
import {ArrayStore} from '../store/array-store.js'
import {raise, workerBody} from '../util/worker-body.js'
import {WRITE_FAILED, WRITES_DONE, type BackgroundWrite} from './background-writes.js'

const CHUNK = 1 << 28
// This thread's store: it holds nothing, and collects after each write (below).
const store = new ArrayStore()

// The body only sets up the handler: the thread lives on it until it is ended.
await workerBody<null>(({port, signal}) => {
  let failed = false
  port.on('message', ({fd, bytes, position, written}: BackgroundWrite) => {
    try {
      // After a failure the rest are only counted: the index is abandoned anyway.
      for (let at = 0; !failed && at < bytes.length; at += CHUNK) fs.writeSync(fd, bytes, at, Math.min(CHUNK, bytes.length - at), position + at)
    } catch (e) {
      if (!failed) port.postMessage({error: e instanceof Error ? e.message : String(e)})
      failed = true
      Atomics.store(signal, WRITE_FAILED, 1)
    }
    Atomics.add(signal, WRITES_DONE, 1)
    Atomics.notify(signal, WRITES_DONE)
    // This thread's hold on the array written is its last one once the analysis has dropped it,
    // and this thread allocates too little for V8 to collect by itself: without a collection each
    // array handed here (the shortest-path parents, 8 bytes an object slot, while the dominator pass
    // grows) stayed resident until the analysis ended. After the handler, which still holds it; and
    // `written` after the collection, so that a thread waiting for it to allocate finds the memory
    // gone (2: not written, a reader waiting for it must not read what is there).
    const outcome = failed ? 2 : 1
    setImmediate(() => {
      store.collect()
      if (written) raise(written, 0, outcome)
    })
  })
}, true)
