/**
 * Worker thread body of dominator-job.ts: computes the dominator tree over the shared graph
 * arrays, hands the result back on the port (its buffers transferred, not copied) and raises the
 * signal the main thread sleeps on.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {dominatorTree, type DominatorInput} from './dominators.js'

const {input, port, signal} = workerData as {input: DominatorInput; port: MessagePort; signal: Int32Array}
try {
  const tree = dominatorTree(input)
  port.postMessage({tree}, [tree.idom.buffer as ArrayBuffer, tree.preorder.buffer as ArrayBuffer, tree.leakStarts.buffer as ArrayBuffer])
} catch (e) {
  port.postMessage({error: e instanceof Error ? e.message : String(e)})
} finally {
  Atomics.store(signal, 0, 1)
  Atomics.notify(signal, 0)
  parentPort?.close()
}
