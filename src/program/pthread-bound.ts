import type {Program} from './program.js'
import {pthreadAddress} from './thread-pointer.js'

/**
 * Threads whose struct pthread is not known but whose thread pointer is, under TLS variant I
 * (aarch64's kernel cores, libc's `_thread_db_*` descriptors missing with its file): struct pthread
 * ends at the thread pointer, so tp less the architecture's lower bound on its size
 * (`Architecture.minPthreadSize`) lies inside it. Roots cut a thread's stack there and scan its
 * TLS from there: the part of struct pthread below counts as stack, none of the next block is
 * taken. Not a pthread_t: nothing is named or matched by it. tid → that address.
 */
export function pthreadInsideBounds(program: Program, pthreadSizeKnown: boolean): Map<number, number> {
  const within = new Map<number, number>()
  const core = program.core
  if (pthreadSizeKnown || core.arch.name !== 'aarch64') return within
  const bound = core.arch.minPthreadSize
  for (const t of core.threads) {
    if (pthreadAddress(program, t) !== null || t.threadPointer === null || t.threadPointer < bound) continue
    const at = t.threadPointer - bound
    if (core.memory.segmentAt(at) === core.memory.segmentAt(t.threadPointer)) within.set(t.tid, at)
  }
  return within
}
