import type {Thread} from '../core/thread-registers.js'
import type {Program} from './program.js'
import {rtldThreadLists, walkPthreadList} from './rtld-thread-lists.js'
import {threadDb} from './thread-db.js'

/**
 * Where each thread's glibc `struct pthread` is (its pthread_t), and how that was found. On x86-64
 * (TLS variant II) the TCB at fs_base is struct pthread itself. On aarch64 (variant I) it lies below
 * the thread pointer (NT_ARM_TLS in a kernel's core), at tp − sizeof(struct pthread) (libc's
 * `_thread_db_sizeof_pthread`). A QEMU-user core records no thread pointer at all: there, and for
 * any thread whose tp does not give it, the struct pthread is found on glibc's own lists instead, as
 * libthread_db finds them (`_dl_stack_used` and `_dl_stack_user`). Either way one is taken only
 * where its tid field is that thread's, so a struct pthread is proven by the core, never guessed.
 */
export interface PthreadsOfThreads {
  byTid: Map<number, number>
  /** Why some or all threads have none, or null. */
  unknown: string | null
}

const found = new WeakMap<Program, PthreadsOfThreads>()

export function pthreadsOfThreads(program: Program): PthreadsOfThreads {
  let p = found.get(program)
  if (!p) found.set(program, (p = locate(program)))
  return p
}

/** A thread's struct pthread (pthread_t), or null when it is not known (pthreadsOfThreads().unknown says why). */
export function pthreadAddress(program: Program, thread: Thread): number | null {
  return pthreadsOfThreads(program).byTid.get(thread.tid) ?? null
}

/** Why pthreadAddress answers null for some of a program's threads, or null when it answers for all. */
export function pthreadUnknownWhy(program: Program): string | null {
  return pthreadsOfThreads(program).unknown
}

function locate(program: Program): PthreadsOfThreads {
  const core = program.core
  const byTid = new Map<number, number>()
  if (core.arch.name === 'x86-64') {
    for (const t of core.threads) if (t.threadPointer !== null) byTid.set(t.tid, t.threadPointer)
    return {byTid, unknown: null}
  }
  belowThreadPointers(program, byTid)
  if (byTid.size === core.threads.length) return {byTid, unknown: null}
  const lists = rtldThreadLists(program)
  const what = `${core.arch.name}: struct pthread is below the thread pointer${core.threads.every(t => t.threadPointer === null) ? ', which the core does not record (no NT_ARM_TLS, as QEMU writes cores)' : ''}`
  if (lists.why !== null || lists.tidOffset === null) return {byTid, unknown: `${what}, and glibc's thread lists cannot be read (${lists.why ?? 'no _thread_db_pthread_tid'}): the threads' TLS and struct pthread are unknown`}
  const tids = new Set(core.threads.map(t => t.tid))
  const broken: string[] = []
  for (const head of [lists.stackUsed, lists.stackUser]) {
    if (head === null) continue
    const list = walkPthreadList(core.memory, head, lists.listOffset)
    if (list.broken) broken.push(list.broken)
    for (const tcb of list.tcbs) {
      const tid = core.memory.readI32(tcb + lists.tidOffset)
      if (tid !== undefined && tids.has(tid) && !byTid.has(tid)) byTid.set(tid, tcb)
    }
  }
  const missing = core.threads.filter(t => !byTid.has(t.tid)).map(t => t.tid)
  if (!missing.length) return {byTid, unknown: null}
  return {byTid, unknown: `${what}, and glibc's thread lists hold none for thread(s) ${missing.join(', ')}${broken.length ? ` (${broken.join('; ')})` : ''}: their TLS and struct pthread are unknown`}
}

/** TLS variant I (aarch64): each thread's struct pthread at tp − sizeof(struct pthread), where its tid field is the thread's. */
function belowThreadPointers(program: Program, byTid: Map<number, number>): void {
  const db = threadDb(program)
  const size = db?.sizeOf('pthread') ?? null
  const tidOffset = db?.field('pthread_tid')?.[2] ?? null
  if (size === null || tidOffset === null) return
  for (const t of program.core.threads) {
    if (t.threadPointer === null || t.threadPointer < size) continue
    const tcb = t.threadPointer - size
    if (program.core.memory.readI32(tcb + tidOffset) === t.tid) byTid.set(t.tid, tcb)
  }
}
