import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
import {MessageChannel, Worker, receiveMessageOnPort} from 'node:worker_threads'
import {isShared, sharedCopy} from '../util/shared-arrays.js'
import {dominatorTree, type DominatorInput, type DominatorTree} from './dominators.js'

/** A dominator tree being computed: `join` waits for it. */
export interface DominatorJob {
  join(): DominatorTree
  /** Whether it runs on a worker thread (beside the main thread's next phases). */
  readonly parallel: boolean
}

/**
 * Starts the dominator pass. With more than one worker allowed it runs on a worker thread over
 * the same (shared) graph arrays while the main thread names types, sums up and writes the
 * index, so its time overlaps theirs on a second core; the tree is the same either way (one
 * function computes it). Without a second worker, or where the worker's compiled file is not
 * there (sources run by the test runner), it runs at once on this thread.
 */
export function startDominatorTree(input: DominatorInput, workers: number): DominatorJob {
  const script = new URL('./dominator-worker.js', import.meta.url)
  const shareable = isShared(input.outStart) && isShared(input.outTo) && isShared(input.inStart) && isShared(input.inFrom)
  if (workers < 2 || !shareable || !fs.existsSync(fileURLToPath(script))) {
    const tree = dominatorTree(input)
    return {join: () => tree, parallel: false}
  }
  // The small arrays are copied.
  const shared: DominatorInput = {
    ...input,
    rootTo: sharedCopy(input.rootTo),
    live: isShared(input.live) ? input.live : sharedCopy(input.live),
    rootGroup: input.rootGroup && sharedCopy(input.rootGroup),
  }
  const {port1, port2} = new MessageChannel()
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(script, {workerData: {input: shared, port: port2, signal}, transferList: [port2]})
  worker.unref()
  return {
    parallel: true,
    join(): DominatorTree {
      // The main thread has nothing else to do by now: sleep until the worker signals.
      while (Atomics.load(signal, 0) === 0) Atomics.wait(signal, 0, 0, 1000)
      const got = receiveMessageOnPort(port1)?.message as {tree?: DominatorTree; error?: string} | undefined
      port1.close()
      void worker.terminate()
      if (!got?.tree) throw new Error(`dominator worker failed: ${got?.error ?? 'no result'}`)
      return got.tree
    },
  }
}
