import {FIRST_JOB_WORD, WorkerJob} from '../util/worker-job.js'
import {isShared, sharedCopy} from '../util/shared-arrays.js'
import {dominatorChildren, type DominatorChildren} from './dominator-children.js'
import {copyPredecessors, dominatorTree, type DominatorInput, type DominatorTree, type PredecessorCopy} from './dominators.js'
import type {TreeWalkInput, TreeWalkSums} from './dominator-walk.js'
import type {FileArray} from '../util/file-array.js'
import {ParkedArray} from '../util/parked-array.js'

/** A dominator tree being computed: `join` waits for it, `children` then for its child lists. */
export interface DominatorJob {
  /**
   * Returns once the pass is past its largest memory (its semidominators known, its predecessor
   * copy released) or done: what the caller allocates while it waits then does not add to the
   * pass's peak. On a worker the caller first waits for the pass's DFS numbering, then takes a
   * share of its predecessor copy (dominators.ts: PredecessorCopy) until none is left.
   */
  awaitPastPeak(): void
  /**
   * On a worker: waits for the pass's DFS numbering, then takes a share of its predecessor copy
   * until no piece is left. Once: awaitPastPeak helps too when it has not been called.
   */
  help(): void
  join(): DominatorTree
  children(): DominatorChildren
  /**
   * On a worker: has it walk a part of the dominator tree (dominator-walk.ts) beside the caller's
   * own part; the function returned waits for its sums. Null where the pass ran on this thread, or
   * where an array of `part` is not shared (posting would copy it): the caller walks it all.
   */
  shareWalk(part: TreeWalkInput): (() => TreeWalkSums) | null
  /** Lets the worker go (it waits for a walk until then); after the walk's sums, or instead of it. */
  release(): void
  /** Whether it runs on a worker thread (beside the main thread's next phases). */
  readonly parallel: boolean
  /** Whether the tree it joins has its preorder (startDominatorTree: keepPreorder). */
  readonly preorderKept: boolean
}

/** Index of the signal word that says how far the worker is (the values below). */
export const STAGE_WORD = FIRST_JOB_WORD
/**
 * How far the worker is: its predecessor copy open to a helper (posted), past its peak memory,
 * the tree posted, the child lists, then its part of the tree walk's sums.
 */
export const COPY_OPEN = 1
export const PAST_PEAK = 2
export const POSTED_TREE = 3
export const POSTED_CHILDREN = 4
export const POSTED_WALK = 5
/** Index of the signal word that tells the worker, once its child lists are posted, to walk (WALK_ASKED) or to end (LET_GO). */
export const WALK_WORD = FIRST_JOB_WORD + 1
export const WALK_ASKED = 1
export const LET_GO = 2

/**
 * Starts the dominator pass. With more than one worker allowed it runs on a worker thread over
 * the same (shared) graph arrays while the main thread names types, sums up and writes the
 * index, so its time overlaps theirs on a second core; the worker then sorts out the tree's
 * child lists while the main thread sums retained sizes, and walks a part of the tree beside the
 * main thread (shareWalk). The results are the same either way
 * (the same functions compute them). Without a second worker it all runs on this thread.
 */
export function startDominatorTree(input: DominatorInput, workers: number, keepPreorder: (bytesToCome: number) => boolean = () => true): DominatorJob {
  if (!dominatorPassOnWorker(input, workers)) {
    const spare: Uint32Array[] = []
    let tree = dominatorTree(input, false, spare)
    // Where the caller sums retained sizes over the child lists (a memory limit), the preorder
    // (4 bytes a live object) goes now, before the child lists' starts allocate (4 bytes an
    // object slot, where the pass's spare arrays are too short: the room they take is asked for).
    const preorderKept = keepPreorder(4 * (input.objectCount + 2))
    if (!preorderKept) {
      tree = {...tree, preorder: new Uint32Array(0)}
      input.collect?.()
    }
    // At once, into the pass's spare arrays: they are not kept beside the retained sizes.
    const children = dominatorChildren(tree.idom, input.objectCount, spare)
    // Where the sums go over the child lists, the tree's arrays wait in scratch files beside the
    // index until the sums take them (the names run first, on this thread: they never read them).
    const held = preorderKept || input.scratchBeside === undefined ? heldInMemory(tree, children) : heldInFiles(tree, children, input.scratchBeside)
    return {
      awaitPastPeak: () => {},
      help: () => {},
      join: () => held.tree(),
      children: () => held.children(),
      shareWalk: () => null,
      release: () => held.release(),
      parallel: false,
      preorderKept,
    }
  }
  // The store's collection, apart: the job's functions below must not reach the input (its edges).
  const collect = input.collect
  // The small arrays are copied.
  const shared: DominatorInput = {
    ...input,
    rootTo: sharedCopy(input.rootTo),
    live: isShared(input.live) ? input.live : sharedCopy(input.live),
    rootGroup: input.rootGroup && sharedCopy(input.rootGroup),
    // The worker collects with a store of its own (dominator-worker.ts): a function is not posted.
    collect: undefined,
    room: undefined,
  }
  // The stage posted, then what the worker is to do after the child lists.
  const job = WorkerJob.start('dominator worker', WORKER_SCRIPT, null, 2)
  const signal = job.signal
  // Its first message (dominator-worker.ts: not in workerData, which the worker would hold throughout).
  job.port.postMessage({input: shared})
  const done = (): void => {
    if (Atomics.load(signal, WALK_WORD) === 0) job.tell(WALK_WORD, LET_GO)
    job.end()
  }
  // What the worker posted instead of its copy (an error), for join to report.
  let early: {error?: string} | null = null
  let helped = false
  const helpWithCopy = (): void => {
    if (helped) return
    helped = true
    // A worker that never started: join() says so at once, not after a second wait.
    if (!job.await(STAGE_WORD, COPY_OPEN)) {
      early = NEVER_STARTED
      return
    }
    const got = job.next<{copy?: PredecessorCopy | null; error?: string}>()
    if (got?.copy) copyPredecessors(got.copy)
    else if (got && got.copy === undefined) early = got
  }
  return {
    parallel: true,
    help: helpWithCopy,
    awaitPastPeak(): void {
      helpWithCopy()
      if (early) return
      job.await(STAGE_WORD, PAST_PEAK)
      // This thread's hold on the predecessor copy it helped with (its lists and semi[]), which
      // the worker has let go: freed before the caller allocates.
      collect?.()
    },
    join(): DominatorTree {
      const got: {tree?: DominatorTree; error?: string} = early ?? awaitPosted<{tree?: DominatorTree}>(job, POSTED_TREE)
      if (!got.tree) done()
      // This thread's hold on the predecessor copy it helped with, now that the pass is done with it.
      else collect?.()
      return got.tree ?? failed(got)
    },
    children(): DominatorChildren {
      const got = awaitPosted<{children?: DominatorChildren}>(job, POSTED_CHILDREN)
      if (!got.children) done()
      return got.children ?? failed(got)
    },
    shareWalk(part: TreeWalkInput): (() => TreeWalkSums) | null {
      const arrays = [part.childStart, part.child, part.typeOf, part.retainedBytes]
      if (Atomics.load(signal, WALK_WORD) !== 0 || !arrays.every(a => isShared(a))) return null
      job.port.postMessage({part})
      job.tell(WALK_WORD, WALK_ASKED)
      return () => {
        const got = awaitPosted<{walk?: TreeWalkSums}>(job, POSTED_WALK)
        return got.walk ?? failed(got)
      }
    },
    release: done,
    preorderKept: true,
  }
}

/** The pass's results on this thread, each handed over once: the job keeps no hold on them (the caller may let idom go). */
interface HeldTree {
  tree(): DominatorTree
  children(): DominatorChildren
  release(): void
}

function heldInMemory(tree: DominatorTree, children: DominatorChildren): HeldTree {
  return {tree: handedOnce('tree', () => tree), children: handedOnce('children', () => children), release: () => {}}
}

/** idom and the child lists parked in scratch files beside `beside` (parked-array.ts), each read back when handed over. */
function heldInFiles(tree: DominatorTree, children: DominatorChildren, beside: string): HeldTree {
  const parked: ParkedArray<Uint32Array>[] = []
  const park = (a: Uint32Array) => {
    const p = new ParkedArray(a, beside)
    parked.push(p)
    return p
  }
  try {
    const idom = park(tree.idom)
    const childStart = park(children.childStart)
    const child = park(children.child)
    const {leakStarts, preorder, groupCount, parentParked} = tree
    return {
      tree: handedOnce('tree', () => ({idom: idom.take(), leakStarts, preorder, groupCount, parentParked})),
      children: handedOnce('children', () => ({childStart: childStart.take(), child: child.take()})),
      release: () => parked.forEach(p => p.remove()),
    }
  } catch (e) {
    parked.forEach(p => p.remove())
    throw e
  }
}

/** `give` called once, and its hold let go (a second call is an error). */
function handedOnce<T>(what: string, give: () => T): () => T {
  let held: (() => T) | null = give
  return () => {
    if (!held) throw new Error(`dominator job: ${what} handed over already`)
    const take = held
    held = null
    return take()
  }
}

const WORKER_SCRIPT = new URL('./dominator-worker.js', import.meta.url)

/**
 * Whether startDominatorTree will run the pass on a worker thread (else on this one, before it
 * returns: a caller that still needs the reverse graph must then have used it before).
 */
export function dominatorPassOnWorker(input: Pick<DominatorInput, 'forward' | 'reverse'>, workers: number): boolean {
  const forward = input.forward.edges
  const reverse = input.reverse.edges
  const shareable = forward !== null && isShared(inMemory(forward.outStart)) && isShared(inMemory(forward.outTo)) && reverse !== null && isShared(inMemory(reverse.inStart)) && isShared(inMemory(reverse.inFrom))
  return workers >= 2 && shareable
}

/** The array itself, or where it lies in a file the word that says it is written (shared if another thread writes it). */
function inMemory(a: Uint32Array | FileArray): ArrayBufferView {
  return a instanceof Uint32Array ? a : a.written
}

const NEVER_STARTED = {error: 'the worker thread did not start'}

/** Sleeps until the worker has posted `stage` (the main thread has nothing else to do by then); its message. */
function awaitPosted<T>(job: WorkerJob, stage: number): T & {error?: string} {
  if (!job.await(STAGE_WORD, stage)) return NEVER_STARTED as T & {error?: string}
  return job.next<T & {error?: string}>() ?? ({} as T & {error?: string})
}

function failed(got: {error?: string}): never {
  throw new Error(`dominator worker failed: ${got.error ?? 'no result'}`)
}
