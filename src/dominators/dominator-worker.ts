/**
 * Worker thread body of dominator-job.ts: computes the dominator tree over the shared graph
 * arrays and hands it back on the port (idom in shared memory, the other buffers transferred),
 * then the tree's child lists, raising the stage word the main thread sleeps on after each; then,
 * if asked, walks its part of the tree (dominator-walk.ts) and posts the sums.
 */
import {receiveMessageOnPort, type MessagePort} from 'node:worker_threads'
import {awaitSignal} from '../util/await-signal.js'
import {raise, workerBody} from '../util/worker-body.js'
import {walkDominatorTree, type TreeWalkInput} from './dominator-walk.js'
import {ArrayStore} from '../store/array-store.js'
import {dominatorChildren} from './dominator-children.js'
import {isShared} from '../util/shared-arrays.js'
import {COPY_OPEN, PAST_PEAK, POSTED_CHILDREN, POSTED_TREE, POSTED_WALK, STAGE_WORD, WALK_ASKED, WALK_WORD} from './dominator-job.js'
import {dominatorTree, type DominatorInput, type PredecessorCopy} from './dominators.js'

await workerBody<null>(({port, signal}) => dominatorBody(port, signal))

function dominatorBody(port: MessagePort, signal: Int32Array): void {
  const stage = (s: number): void => raise(signal, STAGE_WORD, s)
  // The pass's input comes as the port's first message (posted before this thread started), not in
  // workerData: what workerData holds stays held by a handle scope of the thread's start for as long
  // as this body runs, so the out-edges it gave (12 bytes an object slot) outlived the DFS, the last
  // step to read them, through the rest of the pass.
  let input = (receiveMessageOnPort(port)?.message as {input: DominatorInput} | undefined)?.input ?? null
  // This thread's store: it collects where the pass lets arrays go.
  const store = new ArrayStore()
  if (input) input.collect = () => store.collect()
  try {
    if (!input) throw new Error('no input posted')
    const objectCount = input.objectCount
    // The pass takes the edges out of the input (and collects them) as soon as it has read them:
    // they are shared with the main thread, which drops them too, and this thread's references
    // must not keep them alive through the rest of the pass.
    const spare: Uint32Array[] = []
    const tree = dominatorTree(input, true, spare, () => stage(PAST_PEAK), copy => offerCopy(port, copy, stage))
    input = null
    // Its own buffers move to the main thread; one in shared memory (the DFS's, given) is seen there already.
    const moved = [tree.preorder.buffer, tree.leakStarts.buffer].filter((b): b is ArrayBuffer => !(b instanceof SharedArrayBuffer))
    port.postMessage({tree}, moved)
    stage(POSTED_TREE)
    // The pass's other working arrays are garbage now: free them before the child lists are built
    // (nothing else would collect this thread's heap in time). The lists reuse the spare ones.
    store.collect()
    const children = dominatorChildren(tree.idom, objectCount, spare)
    port.postMessage({children}) // shared arrays: nothing to transfer
  } catch (e) {
    port.postMessage({error: errorText(e)})
  } finally {
    stage(POSTED_CHILDREN)
  }
  // Then, if the main thread asks before letting this thread go, a part of the tree walk.
  awaitSignal(signal, WALK_WORD, WALK_ASKED)
  if (Atomics.load(signal, WALK_WORD) === WALK_ASKED) {
    try {
      const {part} = receiveMessageOnPort(port)!.message as {part: TreeWalkInput}
      port.postMessage({walk: walkDominatorTree(part)})
    } catch (e) {
      port.postMessage({error: errorText(e)})
    } finally {
      stage(POSTED_WALK)
    }
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}

/**
 * Offers the main thread a share of the predecessor copy: the arrays it reads and the lists it
 * writes, all shared. Anything unshared would be cloned, not shared: then no offer.
 */
function offerCopy(port: MessagePort, copy: PredecessorCopy, stage: (s: number) => void): void {
  const {inFrom, ...rest} = copy
  const arrays = [...Object.values(rest).filter(v => ArrayBuffer.isView(v)), inFrom instanceof Uint32Array ? inFrom : inFrom.written]
  port.postMessage({copy: arrays.every(a => isShared(a as ArrayBufferView)) ? copy : null})
  stage(COPY_OPEN)
}
